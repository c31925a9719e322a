// Command notplugin is a program that is not a plugin at all: it exits at once.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "usage: notplugin FILE")
	os.Exit(2)
}
