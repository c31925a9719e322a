# m cannot exceed the number of branches.
# expect: 16: Invalid value for m
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
  m        = 3
}
