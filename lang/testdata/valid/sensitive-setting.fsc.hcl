# A setting read from a sensitive variable: its value is used, and stays out of messages.
workflow "sensitive" {}

variable "host" {
  type      = string
  default   = "api.example.com"
  sensitive = true
}

component "mailer" {
  source        = "acme/mailer"
  version       = "~> 1.2"
  allowed_hosts = [var.host]
  config        = { host = var.host }
}

task "send" {
  uses   = component.mailer.send
  inputs = { to = "ops@example.com" }
}
