# A secret needs env or file.
# expect: 5: Missing secret source
workflow "w" {}

secret "token" {}
