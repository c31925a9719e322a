module github.com/nats-io/nuid

go 1.25.0
