package app

func extraCommands() []command {
	return []command{
		{"tray", "start the tray app with the companion (the default)", runTray},
	}
}

func runTray(env Env, args []string) error {
	return runHeadless(env, args)
}
