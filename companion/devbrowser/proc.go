package devbrowser

// process is a started Chromium.
type process struct {
	pid    int
	exited chan struct{} // closed once it has exited and been reaped
	// kill ends it and every helper it started.
	kill func()
	// release frees what the system keeps for it (a job object).
	release func()
}
