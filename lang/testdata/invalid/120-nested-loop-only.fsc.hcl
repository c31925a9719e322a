# A loop whose body is only a nested loop: one error, the nesting, not also an empty body.
# detail: setproduct
# expect: 8: Nested loop
workflow "w" {}

loop "outer" {
  for_each = [1, 2]
  loop "inner" {
    for_each = [3, 4]
    task "t" {
      uses = builtin.transform
    }
  }
}
