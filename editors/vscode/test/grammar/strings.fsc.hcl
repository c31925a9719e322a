# SYNTAX TEST "source.fuscia" "strings, templates and heredocs"

task "t" {
  inputs = {
    plain = "tab\t quote\" back\\ \u00e9 \U0001F600"
#           ^ string.quoted.double.fuscia punctuation.definition.string.begin.fuscia
#            ^^^ string.quoted.double.fuscia - constant
#               ^^ string.quoted.double.fuscia constant.character.escape.fuscia
#                       ^^ constant.character.escape.fuscia
#                              ^^ constant.character.escape.fuscia
#                                 ^^^^^^ constant.character.escape.fuscia
#                                        ^^^^^^^^^^ constant.character.escape.fuscia
#                                                  ^ string.quoted.double.fuscia punctuation.definition.string.end.fuscia
    bad = "\q"
#          ^^ string.quoted.double.fuscia invalid.illegal.escape.fuscia
    interp = "Hello, ${var.name}!"
#             ^^^^^^^ string.quoted.double.fuscia - meta.interpolation
#                    ^^ string.quoted.double.fuscia meta.interpolation.fuscia punctuation.definition.template-expression.begin.fuscia
#                      ^^^ meta.interpolation.fuscia meta.embedded.line.fuscia variable.language.fuscia
#                         ^ meta.interpolation.fuscia punctuation.accessor.fuscia
#                          ^^^^ meta.interpolation.fuscia variable.other.member.fuscia
#                              ^ meta.interpolation.fuscia punctuation.definition.template-expression.end.fuscia
#                               ^ string.quoted.double.fuscia - meta.interpolation
    nested = "n=${length(var.items) + 1} ${upper("x${var.y}")}"
#                 ^^^^^^ meta.interpolation.fuscia meta.function-call.fuscia support.function.fuscia
#                                   ^ meta.interpolation.fuscia keyword.operator.arithmetic.fuscia
#                                     ^ meta.interpolation.fuscia constant.numeric.fuscia
#                                          ^^^^^ meta.interpolation.fuscia meta.function-call.fuscia support.function.fuscia
#                                                ^ meta.interpolation.fuscia meta.function-call.fuscia string.quoted.double.fuscia punctuation.definition.string.begin.fuscia
#                                                  ^^ meta.interpolation.fuscia string.quoted.double.fuscia meta.interpolation.fuscia punctuation.definition.template-expression.begin.fuscia
#                                                    ^^^ string.quoted.double.fuscia meta.interpolation.fuscia variable.language.fuscia
#                                                           ^ meta.function-call.fuscia punctuation.section.arguments.end.fuscia
#                                                            ^ meta.interpolation.fuscia punctuation.definition.template-expression.end.fuscia
#                                                             ^ string.quoted.double.fuscia punctuation.definition.string.end.fuscia
    strip = "${~ var.a ~}"
#            ^^ punctuation.definition.template-expression.begin.fuscia
#              ^ meta.interpolation.fuscia keyword.operator.template.strip.fuscia
#                      ^ meta.interpolation.fuscia keyword.operator.template.strip.fuscia
#                       ^ punctuation.definition.template-expression.end.fuscia
    cond = "%{ if var.ok }yes%{ else }no%{ endif }"
#           ^^ meta.directive.fuscia punctuation.definition.template-expression.begin.fuscia
#              ^^ meta.directive.fuscia keyword.control.directive.fuscia
#                 ^^^ meta.directive.fuscia variable.language.fuscia
#                        ^ meta.directive.fuscia punctuation.definition.template-expression.end.fuscia
#                         ^^^ string.quoted.double.fuscia - meta.directive
#                               ^^^^ keyword.control.directive.fuscia
#                                          ^^^^^ keyword.control.directive.fuscia
    loop = "%{~ for i in var.items ~}${i},%{ endfor ~}"
#             ^ meta.directive.fuscia keyword.operator.template.strip.fuscia
#               ^^^ meta.directive.fuscia keyword.control.directive.fuscia
#                  ^^^ meta.directive.fuscia
#                     ^^ meta.directive.fuscia keyword.control.directive.fuscia
#                                     ^^^ meta.interpolation.fuscia
#                                            ^^^^^^ meta.directive.fuscia keyword.control.directive.fuscia
    literal = "$${not} %%{not}"
#              ^^^ string.quoted.double.fuscia constant.character.escape.template.fuscia
#                 ^^^^ string.quoted.double.fuscia - meta.interpolation
#                      ^^^ constant.character.escape.template.fuscia
#                         ^^^^ string.quoted.double.fuscia - meta.directive
    heredoc = <<EOT
#             ^^ string.unquoted.heredoc.fuscia keyword.operator.heredoc.fuscia
#               ^^^ string.unquoted.heredoc.fuscia keyword.control.heredoc.fuscia
Hello ${var.name}, "quotes" and # hashes stay text
# <------ string.unquoted.heredoc.fuscia
#     ^^ string.unquoted.heredoc.fuscia meta.interpolation.fuscia punctuation.definition.template-expression.begin.fuscia
#       ^^^ meta.interpolation.fuscia variable.language.fuscia
#                  ^^^^^^^^ string.unquoted.heredoc.fuscia - string.quoted
#                               ^^^^^^^^ string.unquoted.heredoc.fuscia - comment
  $${literal} EOT is not the end
# ^^^ string.unquoted.heredoc.fuscia constant.character.escape.template.fuscia
#             ^^^ string.unquoted.heredoc.fuscia - keyword
EOT
# <--- string.unquoted.heredoc.fuscia keyword.control.heredoc.fuscia
    indented = <<-EOF
#              ^^^ keyword.operator.heredoc.fuscia
#                 ^^^ keyword.control.heredoc.fuscia
      Dear ${var.name},
#     ^^^^^ string.unquoted.heredoc.fuscia
#          ^^ meta.interpolation.fuscia punctuation.definition.template-expression.begin.fuscia
      %{ for x in var.items }- ${x}
#     ^^ meta.directive.fuscia punctuation.definition.template-expression.begin.fuscia
#        ^^^ meta.directive.fuscia keyword.control.directive.fuscia
#                            ^^ string.unquoted.heredoc.fuscia - meta.directive
      %{ endfor }
#        ^^^^^^ keyword.control.directive.fuscia
    EOF
#   ^^^ string.unquoted.heredoc.fuscia keyword.control.heredoc.fuscia
    after = 1
#   ^^^^^ meta.braces.fuscia variable.other.property.fuscia - string
#           ^ constant.numeric.fuscia - string
  }
  unclosed = "a string left open at the end of the line
#            ^ string.quoted.double.fuscia punctuation.definition.string.begin.fuscia
  next = 1
# ^^^^ meta.attribute.fuscia entity.other.attribute-name.fuscia - string
}
# <- meta.block.fuscia punctuation.section.block.end.fuscia
