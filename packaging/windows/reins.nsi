; Reins for Windows: a per-user installer that needs no administrator.
;
; Built by packaging/windows/build.sh, which defines:
;   VERSION    the version from FyneApp.toml ("0.1.0")
;   VIVERSION  the same padded to four parts, as VIProductVersion requires
;   EXE        the cross-compiled reins.exe
;   ICON       reins.ico
;   EXTDIR     the extension folder (for "Load unpacked")
;   GENERATED  dir with the native messaging manifests, nativehosts.nsh and
;              reins-native-host.cmd
;   OUTFILE    where the installer goes
;   SIGN       (optional) a command that signs the file named by %1 in place
;
; What it does, all under the current user (HKCU, %LOCALAPPDATA%):
;   - installs into %LOCALAPPDATA%\Programs\Reins, where per-user apps go;
;   - adds a Start-menu shortcut and an Apps & features entry;
;   - starts Reins at login (a shortcut in the user's Startup folder);
;   - registers the native messaging host for Chrome, Chromium, Brave, Edge,
;     Vivaldi and Firefox (HKCU keys pointing at manifests in the install dir).
; The uninstaller removes every one of these. The person's data (tokens,
; settings in %APPDATA%\reins) stays, as with any app, so a reinstall keeps
; its agents; README.md says how to remove it.

; A 64-bit installer for a 64-bit app: on 32-bit Windows, where reins.exe
; could not run, it refuses to start instead of installing something dead.
Target amd64-unicode
ManifestDPIAware true
RequestExecutionLevel user
SetCompressor /SOLID lzma
CRCCheck on

!include "MUI2.nsh"
!include "FileFunc.nsh"
!include "${GENERATED}\nativehosts.nsh"

!define APPNAME "Reins"
!define UNINSTKEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\Reins"
; Start at login is the Startup-folder shortcut that the tray's "Start at
; login" toggle (app/autostart.go, go-autostart) reads and writes, under the
; same name: the menu then shows the truth, the toggle turns off what the
; installer turned on, and login never starts Reins twice (a second launch
; would open the dashboard). A Run value would do none of that.
!define STARTUPLNK "$SMSTARTUP\reins.lnk"
; Removed on uninstall in case an older build or the person added one.
!define RUNKEY "Software\Microsoft\Windows\CurrentVersion\Run"
!define RUNVALUE "Reins"

!ifdef SIGN
  ; Signing here, as the compiler writes each file, is the only way to sign
  ; the uninstaller: it is generated inside the installer.
  !finalize '${SIGN} "%1"'
  !uninstfinalize '${SIGN} "%1"'
!endif

Name "${APPNAME}"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\Reins"
; An upgrade goes where the last install went, even if the person chose
; another folder then.
InstallDirRegKey HKCU "Software\Reins" "InstallDir"
BrandingText "${APPNAME} ${VERSION}"

!define MUI_ICON "${ICON}"
!define MUI_UNICON "${ICON}"
!define MUI_ABORTWARNING
!define MUI_FINISHPAGE_RUN "$INSTDIR\reins.exe"
!define MUI_FINISHPAGE_RUN_TEXT "Start Reins now"

!insertmacro MUI_PAGE_WELCOME
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

VIProductVersion "${VIVERSION}"
VIFileVersion "${VIVERSION}"
VIAddVersionKey /LANG=${LANG_ENGLISH} "ProductName" "${APPNAME}"
VIAddVersionKey /LANG=${LANG_ENGLISH} "ProductVersion" "${VERSION}"
VIAddVersionKey /LANG=${LANG_ENGLISH} "FileVersion" "${VERSION}"
VIAddVersionKey /LANG=${LANG_ENGLISH} "FileDescription" "${APPNAME} installer"
VIAddVersionKey /LANG=${LANG_ENGLISH} "CompanyName" "Reins"
VIAddVersionKey /LANG=${LANG_ENGLISH} "LegalCopyright" "Reins authors"

; A running Reins holds reins.exe open, and Windows refuses to replace or
; delete an open file. The installer runs unelevated, and an unelevated
; taskkill can only end this user's processes: on a shared machine another
; person's Reins is left alone (their copy lives in their own profile).
; This also ends native hosts the browsers started; they restart on demand.
; Every program is started by its full path ($SYSDIR\taskkill.exe): a bare
; name is looked up in the working directory and PATH first, where a planted
; taskkill.exe would run with the installer's rights.
!macro REINS_STOP
  nsExec::Exec '"$SYSDIR\taskkill.exe" /F /IM reins.exe'
  Pop $0
!macroend

Section "Reins" SecMain
  SectionIn RO
  SetShellVarContext current
  !insertmacro REINS_STOP

  SetOutPath "$INSTDIR"
  File "/oname=reins.exe" "${EXE}"
  File "/oname=reins.ico" "${ICON}"
  File "${GENERATED}\reins-native-host.cmd"
  !insertmacro REINS_INSTALL_HOST_FILES

  ; Replace the extension folder whole, so files a newer version dropped do
  ; not linger in a folder the browser loads.
  RMDir /r "$INSTDIR\extension"
  SetOutPath "$INSTDIR\extension"
  File /r "${EXTDIR}\*.*"
  SetOutPath "$INSTDIR"

  WriteUninstaller "$INSTDIR\Uninstall Reins.exe"

  CreateShortcut "$SMPROGRAMS\Reins.lnk" "$INSTDIR\reins.exe" "" "$INSTDIR\reins.ico" 0
  CreateShortcut "${STARTUPLNK}" "$INSTDIR\reins.exe" "" "$INSTDIR\reins.ico" 0
  !insertmacro REINS_REGISTER_HOSTS

  WriteRegStr HKCU "Software\Reins" "InstallDir" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayName" "${APPNAME}"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayIcon" "$INSTDIR\reins.ico"
  WriteRegStr HKCU "${UNINSTKEY}" "Publisher" "Reins"
  WriteRegStr HKCU "${UNINSTKEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTKEY}" "UninstallString" '"$INSTDIR\Uninstall Reins.exe"'
  WriteRegStr HKCU "${UNINSTKEY}" "QuietUninstallString" '"$INSTDIR\Uninstall Reins.exe" /S'
  WriteRegDWORD HKCU "${UNINSTKEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTKEY}" "NoRepair" 1
  ${GetSize} "$INSTDIR" "/S=0K" $0 $1 $2
  IntFmt $0 "0x%08X" $0
  WriteRegDWORD HKCU "${UNINSTKEY}" "EstimatedSize" "$0"
SectionEnd

Section "Uninstall"
  SetShellVarContext current
  !insertmacro REINS_STOP

  Delete "${STARTUPLNK}"
  DeleteRegValue HKCU "${RUNKEY}" "${RUNVALUE}"
  ; The same keys the tray app's "reins install-native-host" writes, so
  ; removing them here also unregisters a host the app registered itself.
  !insertmacro REINS_UNREGISTER_HOSTS
  RMDir /r "$LOCALAPPDATA\Reins\NativeMessagingHosts"
  RMDir "$LOCALAPPDATA\Reins"

  Delete "$SMPROGRAMS\Reins.lnk"
  Delete "$INSTDIR\reins.exe"
  Delete "$INSTDIR\reins.ico"
  Delete "$INSTDIR\reins-native-host.cmd"
  !insertmacro REINS_DELETE_HOST_FILES
  RMDir /r "$INSTDIR\extension"
  Delete "$INSTDIR\Uninstall Reins.exe"
  ; Not /r: a folder the person chose may hold their own files.
  RMDir "$INSTDIR"

  DeleteRegKey HKCU "${UNINSTKEY}"
  DeleteRegKey HKCU "Software\Reins"
SectionEnd
