# SYNTAX TEST "source.fuscia" "blocks, labels and attributes"

workflow "orders" {
# <-------- meta.block.fuscia storage.type.block.fuscia
#        ^ punctuation.definition.label.begin.fuscia
#         ^^^^^^ meta.block.fuscia entity.name.label.fuscia
#               ^ punctuation.definition.label.end.fuscia
#                 ^ meta.block.fuscia punctuation.section.block.begin.fuscia
  description = "Route orders"
# ^^^^^^^^^^^ meta.block.fuscia meta.attribute.fuscia entity.other.attribute-name.fuscia
#             ^ meta.attribute.fuscia keyword.operator.assignment.fuscia
#               ^^^^^^^^^^^^^^ meta.attribute.fuscia string.quoted.double.fuscia
  retry {
# ^^^^^ meta.block.fuscia meta.block.fuscia storage.type.block.fuscia
#       ^ meta.block.fuscia meta.block.fuscia punctuation.section.block.begin.fuscia
    attempts = 3
#   ^^^^^^^^ meta.block.fuscia meta.block.fuscia meta.attribute.fuscia entity.other.attribute-name.fuscia
  }
# ^ meta.block.fuscia meta.block.fuscia punctuation.section.block.end.fuscia
  data {
# ^^^^ meta.block.fuscia meta.block.fuscia storage.type.block.fuscia
    on_exceed = "spill"
  }
}
# <- meta.block.fuscia punctuation.section.block.end.fuscia

variable "api" {
# <-------- storage.type.block.fuscia
#         ^^^ entity.name.label.fuscia
  type    = string
# ^^^^ entity.other.attribute-name.fuscia
#           ^^^^^^ variable.other.readwrite.fuscia
  default = "https://api.example.com"
# ^^^^^^^ entity.other.attribute-name.fuscia - storage.type
}
# <- source.fuscia meta.block.fuscia punctuation.section.block.end.fuscia

secret "token" { env = "TOKEN" }
# <------ storage.type.block.fuscia
#       ^^^^^ entity.name.label.fuscia
#                ^^^ meta.block.fuscia meta.attribute.fuscia entity.other.attribute-name.fuscia
#                      ^^^^^^^ meta.attribute.fuscia string.quoted.double.fuscia
#                              ^ meta.block.fuscia punctuation.section.block.end.fuscia - meta.attribute

component "nlp" { source = "acme/nlp" }
# <--------- storage.type.block.fuscia
plugin "shell" { source = "shell" }
# <------ storage.type.block.fuscia

trigger "webhook" "push" {
# <------- storage.type.block.fuscia
#        ^^^^^^^ entity.name.label.fuscia
#                  ^^^^ entity.name.label.fuscia
  auth {
# ^^^^ storage.type.block.fuscia
    hmac_sha256 {
#   ^^^^^^^^^^^ meta.block.fuscia meta.block.fuscia meta.block.fuscia storage.type.block.fuscia
      secret = secret.token
#     ^^^^^^ entity.other.attribute-name.fuscia
#              ^^^^^^ variable.language.fuscia
    }
  }
}

task "fetch" {
# <---- storage.type.block.fuscia
#     ^^^^^ entity.name.label.fuscia
  uses = builtin.http
#        ^^^^^^^ variable.language.fuscia
#               ^ punctuation.accessor.fuscia
#                ^^^^ variable.other.member.fuscia
}

switch "tier" {
# <------ storage.type.block.fuscia
  case "vip" { when = true }
# ^^^^ meta.block.fuscia meta.block.fuscia storage.type.block.fuscia
#      ^^^^^ entity.name.label.fuscia
#              ^^^^ entity.other.attribute-name.fuscia
#                     ^^^^ constant.language.boolean.fuscia
#                          ^ meta.block.fuscia meta.block.fuscia punctuation.section.block.end.fuscia
  default "standard" {}
# ^^^^^^^ storage.type.block.fuscia
#         ^^^^^^^^^^ entity.name.label.fuscia
#                    ^ punctuation.section.block.begin.fuscia
#                     ^ punctuation.section.block.end.fuscia
}

join "filed" {
# <---- storage.type.block.fuscia
  after = [task.fetch]
}
loop "notify" {
# <---- storage.type.block.fuscia
  for_each = []
# ^^^^^^^^ entity.other.attribute-name.fuscia
}
wait "approve" {
# <---- storage.type.block.fuscia
  approval {
# ^^^^^^^^ storage.type.block.fuscia
    message = "ok?"
  }
}
wait "ci" {
  callback {}
# ^^^^^^^^ storage.type.block.fuscia
}
call "bill" {
# <---- storage.type.block.fuscia
  workflow = "billing.fsc.hcl"
# ^^^^^^^^ entity.other.attribute-name.fuscia - storage.type
}
output "queue" {
# <------ storage.type.block.fuscia
  value = join.filed.output.queue
#         ^^^^ variable.language.fuscia
#                    ^^^^^^ variable.other.member.fuscia
}
locals {
# <------ storage.type.block.fuscia
  region = "eu"
}

custom_thing label_ident "quoted" {
# <------------ meta.block.fuscia entity.name.type.block.fuscia - storage.type
#            ^^^^^^^^^^^ entity.name.label.fuscia
#                         ^^^^^^ entity.name.label.fuscia
  nested {
# ^^^^^^ meta.block.fuscia meta.block.fuscia entity.name.type.block.fuscia
  }
}

workflow_name = "an attribute at the top level"
# <------------- meta.attribute.fuscia entity.other.attribute-name.fuscia - storage.type
