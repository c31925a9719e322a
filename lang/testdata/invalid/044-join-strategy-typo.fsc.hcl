# A join strategy that does not exist.
# expect: 11: Invalid value for strategy
workflow "w" {}

task "a" {
  uses = builtin.transform
}

join "j" {
  after    = [task.a]
  strategy = "alll"
}
