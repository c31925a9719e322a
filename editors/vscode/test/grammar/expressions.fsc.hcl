# SYNTAX TEST "source.fuscia" "expressions: literals, operators, functions, references, collections"

task "e" {
  inputs = {
    int   = 42
#   ^^^ meta.braces.fuscia meta.object-literal.key.fuscia variable.other.property.fuscia
#         ^ meta.braces.fuscia keyword.operator.assignment.fuscia
#           ^^ constant.numeric.fuscia
    float = -1.5
#           ^ keyword.operator.arithmetic.fuscia
#            ^^^ constant.numeric.fuscia
    exp   = 1e6 + 2.5E-3
#           ^^^ constant.numeric.fuscia
#                 ^^^^^^ constant.numeric.fuscia
    yes   = true
#           ^^^^ constant.language.boolean.fuscia
    no    = false
#           ^^^^^ constant.language.boolean.fuscia
    none  = null
#           ^^^^ constant.language.null.fuscia
    math  = (var.a + 2) * 3 / 4 % 5 - 1
#           ^ meta.parens.fuscia punctuation.section.parens.begin.fuscia
#                  ^ meta.parens.fuscia keyword.operator.arithmetic.fuscia
#                     ^ meta.parens.fuscia punctuation.section.parens.end.fuscia
#                       ^ keyword.operator.arithmetic.fuscia - meta.parens
#                           ^ keyword.operator.arithmetic.fuscia
#                               ^ keyword.operator.arithmetic.fuscia
#                                   ^ keyword.operator.arithmetic.fuscia
    cmp   = var.a == 1 && var.b != 2 || !(var.c >= 3) && var.d <= 4 && var.e < 5 && var.f > 6
#                 ^^ keyword.operator.comparison.fuscia
#                      ^^ keyword.operator.logical.fuscia
#                               ^^ keyword.operator.comparison.fuscia
#                                    ^^ keyword.operator.logical.fuscia
#                                       ^ keyword.operator.logical.fuscia
#                                               ^^ keyword.operator.comparison.fuscia
#                                                              ^^ keyword.operator.comparison.fuscia
#                                                                            ^ keyword.operator.comparison.fuscia
#                                                                                         ^ keyword.operator.comparison.fuscia
    cond  = var.big ? "big" : "small"
#                   ^ keyword.operator.ternary.fuscia
#                           ^ keyword.operator.ternary.fuscia
    calls = max(var.scores...)
#           ^^^ meta.function-call.fuscia support.function.fuscia
#              ^ meta.function-call.fuscia punctuation.section.arguments.begin.fuscia
#                         ^^^ meta.function-call.fuscia keyword.operator.expand.fuscia
#                            ^ meta.function-call.fuscia punctuation.section.arguments.end.fuscia
    joined = join(",", [for s in var.tags : upper(s)])
#            ^^^^ support.function.fuscia - variable.language
#                                           ^^^^^ meta.function-call.fuscia meta.brackets.fuscia meta.function-call.fuscia support.function.fuscia
    list  = [for o in var.orders : o.id if o.total > 100]
#           ^ meta.brackets.fuscia punctuation.section.brackets.begin.fuscia
#            ^^^ meta.brackets.fuscia keyword.control.fuscia
#                ^ variable.other.readwrite.fuscia
#                  ^^ keyword.control.fuscia
#                                       ^^ keyword.control.fuscia
#                                                       ^ meta.brackets.fuscia punctuation.section.brackets.end.fuscia
    map   = { for k, v in var.m : k => v... }
#           ^ meta.braces.fuscia meta.braces.fuscia punctuation.section.braces.begin.fuscia
#             ^^^ keyword.control.fuscia
#                 ^ variable.other.readwrite.fuscia - variable.other.property
#                  ^ punctuation.separator.comma.fuscia
#                                   ^^ keyword.operator.arrow.fuscia
#                                       ^^^ keyword.operator.expand.fuscia
    refs  = [var.x, secret.token, local.r, each.value, each.key, trigger.payload.body.id]
#            ^^^ variable.language.fuscia
#                ^ variable.other.member.fuscia
#                   ^^^^^^ variable.language.fuscia
#                                 ^^^^^ variable.language.fuscia
#                                          ^^^^ variable.language.fuscia
#                                               ^^^^^ variable.other.member.fuscia
#                                                      ^^^^ variable.language.fuscia
#                                                                ^^^^^^^ variable.language.fuscia
#                                                                        ^^^^^^^ variable.other.member.fuscia
#                                                                                ^^^^ variable.other.member.fuscia
    nodes = [task.fetch.output.items[0].id, switch.tier.output, wait.approve.output, call.bill.output]
#            ^^^^ variable.language.fuscia
#                       ^^^^^^ variable.other.member.fuscia - variable.language
#                                   ^ meta.brackets.fuscia meta.brackets.fuscia punctuation.section.brackets.begin.fuscia
#                                    ^ constant.numeric.fuscia
#                                           ^^^^^^ variable.language.fuscia
#                                                               ^^^^ variable.language.fuscia
#                                                                                    ^^^^ variable.language.fuscia
    more  = [join.filed.output, loop.notify.output, event.id]
#            ^^^^ variable.language.fuscia - support.function
#                               ^^^^ variable.language.fuscia
#                                                   ^^^^^ variable.language.fuscia
    splat = var.list[*].name
#                   ^^^ keyword.operator.splat.fuscia
    attr  = var.list.*.name
#                   ^ punctuation.accessor.fuscia
#                    ^ keyword.operator.splat.fuscia
    index = var.list.0
#                    ^ constant.numeric.index.fuscia
    id    = step-2
#           ^^^^^^ variable.other.readwrite.fuscia - constant.numeric
    "content-type" = "json"
#   ^^^^^^^^^^^^^^ meta.braces.fuscia string.quoted.double.fuscia
#                  ^ keyword.operator.assignment.fuscia
    colon : 1
#   ^^^^^ variable.other.property.fuscia
#         ^ keyword.operator.assignment.fuscia
    inner = { a = 1, b = "two", c = x ? y : z }
#             ^ meta.braces.fuscia meta.braces.fuscia variable.other.property.fuscia
#                    ^ variable.other.property.fuscia
#                               ^ variable.other.property.fuscia
#                                       ^ variable.other.readwrite.fuscia - variable.other.property
#                                         ^ keyword.operator.ternary.fuscia
  }
# ^ meta.attribute.fuscia meta.braces.fuscia punctuation.section.braces.end.fuscia
  after = [task.fetch, switch.tier.vip, task.classify.branch.urgent]
# ^^^^^ entity.other.attribute-name.fuscia
#                    ^ meta.brackets.fuscia punctuation.separator.comma.fuscia
#                                                     ^^^^^^ variable.other.member.fuscia
  uses  = component.nlp.classify
#         ^^^^^^^^^ variable.language.fuscia
#                   ^^^ variable.other.member.fuscia
  when  = plugin.shell.exec != null
#         ^^^^^^ variable.language.fuscia
  other = something
#         ^^^^^^^^^ variable.other.readwrite.fuscia
}
