package app

import "io/fs"

// checkDataDirOwner checks nothing on Windows. Windows has no mode bits
// (Go reports only the read-only attribute), and the default data dir is
// under the user's %AppData%, whose inherited ACL admits only the user,
// SYSTEM and Administrators. Checking the ACL's owner would refuse sound
// dirs: files an elevated process creates are owned by the Administrators
// group, not the user. The admin pipe carries its own per-user security
// descriptor.
func checkDataDirOwner(string, fs.FileInfo) error { return nil }
