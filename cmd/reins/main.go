// Command reins is the Reins tray app and its subcommands.
package main

import (
	"os"

	"github.com/reinshq/reins/app"
)

func main() {
	os.Exit(app.Main(app.Env{Args: os.Args, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}))
}
