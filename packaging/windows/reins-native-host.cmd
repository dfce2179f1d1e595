@echo off
rem Browsers start a native messaging host by path with their own arguments
rem (Chromium: the caller origin and --parent-window; Firefox: the manifest
rem path and add-on id). This names the subcommand; "reins native-host"
rem accepts and ignores those arguments.
"%~dp0reins.exe" native-host %*
