# A wait needs one condition.
# expect: 5: Missing wait condition
workflow "w" {}

wait "w" {
  timeout = "1h"
}
