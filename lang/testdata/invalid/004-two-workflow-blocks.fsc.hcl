# A file holds exactly one workflow block.
# expect: 5: Duplicate workflow block
workflow "one" {}

workflow "two" {}
