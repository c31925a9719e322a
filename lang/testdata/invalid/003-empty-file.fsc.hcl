# A file without any block: the workflow block is missing.
# expect: 1: Missing workflow block
