# m applies to m_of_n only.
# expect: 11: Unexpected m
workflow "w" {}

task "a" {
  uses = builtin.transform
}

join "j" {
  after = [task.a]
  m     = 1
}
