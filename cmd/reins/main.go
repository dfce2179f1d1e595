// Command reins is the Reins tray app and its subcommands.
package main

import (
	"os"

	"github.com/reinshq/reins/app"
	// Initialized before the GUI toolkit reads the locale; see its doc.
	_ "github.com/reinshq/reins/app/clocale"
)

func main() {
	os.Exit(app.Main(app.Env{Args: os.Args, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}))
}
