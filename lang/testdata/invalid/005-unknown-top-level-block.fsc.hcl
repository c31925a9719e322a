# A block type the language does not have.
# expect: 5: Unsupported block type
workflow "w" {}

resource "x" {}
