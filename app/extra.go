package app

func extraCommands() []command {
	return []command{
		{"tray", "start the tray app with the companion (the default)", runTray},
	}
}
