# SYNTAX TEST "source.fuscia" "comments"

# a line comment
# <- comment.line.number-sign.fuscia punctuation.definition.comment.fuscia
#^^^^^^^^^^^^^^^ comment.line.number-sign.fuscia

// another line comment
# <-- comment.line.double-slash.fuscia punctuation.definition.comment.fuscia
# ^^^^^^^^^^^^^^^^^^^^^^ comment.line.double-slash.fuscia

/* a block comment */ workflow "c" {}
# <-- comment.block.fuscia punctuation.definition.comment.fuscia
#  ^^^^^^^^^^^^^^^ comment.block.fuscia
#                  ^^ comment.block.fuscia punctuation.definition.comment.fuscia
#                     ^^^^^^^^ meta.block.fuscia storage.type.block.fuscia - comment

/*
  spanning lines: workflow "not_a_block" {
# ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ comment.block.fuscia - meta.block
*/
# <-- comment.block.fuscia punctuation.definition.comment.fuscia

task "t" { # after a block's brace
#          ^^^^^^^^^^^^^^^^^^^^^^^ meta.block.fuscia comment.line.number-sign.fuscia
  timeout = "1s" // after a value
#                ^^^^^^^^^^^^^^^^ meta.attribute.fuscia comment.line.double-slash.fuscia
  retries = /* inside */ 3
#           ^^^^^^^^^^^^ meta.attribute.fuscia comment.block.fuscia
#                        ^ meta.attribute.fuscia constant.numeric.fuscia
  inputs = {
    # in an object
#   ^^^^^^^^^^^^^^ meta.braces.fuscia comment.line.number-sign.fuscia
    a = "# not a comment" # but this is
#       ^^^^^^^^^^^^^^^^^ string.quoted.double.fuscia - comment
#                         ^^^^^^^^^^^^^ comment.line.number-sign.fuscia
  }
}
