# Loops do not nest.
# expect: 7: Nested loop
workflow "w" {}

loop "outer" {
  for_each = [1, 2]
  loop "inner" {
    for_each = [3, 4]
    task "t" {
      uses = builtin.transform
    }
  }
  task "t2" {
    uses = builtin.transform
  }
}
