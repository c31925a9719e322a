# uses names a component that is not declared.
# expect: 6: Reference to undeclared component
workflow "w" {}

task "a" {
  uses = component.mailer.send
}
