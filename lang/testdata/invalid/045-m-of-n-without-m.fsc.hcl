# m_of_n needs m.
# expect: 13: Missing m for m_of_n
workflow "w" {}

task "a" {
  uses = builtin.transform
}

task "b" {
  uses = builtin.transform
}

join "j" {
  after    = [task.a, task.b]
  strategy = "m_of_n"
}
