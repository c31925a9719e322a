# Run names are unique in a file; a run needs a name.
run "a" {}

run "b" {}

run "a" {}

run "" {}
