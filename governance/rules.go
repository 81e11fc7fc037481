package governance

import (
	"encoding/base64"
	"encoding/hex"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// homeDir matches the ways a command names the user's home directory.
const homeDir = `(~|\$\{?home\}?|%userprofile%|\$env:userprofile|/root)`

// Go's regexp is linear in the input; every expression below also runs only
// on one (bounded) line, after a cheap keyword pre-check.
var (
	reSetupHeading     = mustRx(`(?i)prerequisite|install|setup|set up|getting started|quick ?start|requirements|before you (begin|start)`)
	reHeredoc          = mustRx(`<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)
	reCommentDirective = mustRx(`(?i)\b(ignore|disregard|you must|you should|you are|assistant|agent|ai model|llm|claude|chatgpt|do not tell|don'?t tell|instructions?|execute|run the|send|upload|exfiltrate|always|never)\b`)
	// reCommentAddress: a comment that speaks to the agent and tells it
	// to do something: addressed to it ("agent:", "Claude,"), "you
	// must …", or one of the verbs of an attack. A comment with only a
	// word of reCommentDirective ("do not execute", "always keep this
	// table sorted", "agent-project") is a note to editors: info.
	reCommentAddress = mustRx(`(?i)\b(ai|agent|assistant|claude|chatgpt|llm|model|codex|copilot|gemini)\s*[:,]|\b(you|the\s+(agent|assistant|ai|model))\s+(must|should|shall|will|need\s+to|are\s+(required|instructed)\s+to|have\s+to)\s+\w|\b(ignore|disregard|exfiltrate|do\s+not\s+(tell|mention|reveal|inform|show)|don'?t\s+(tell|mention|reveal|inform|show)|without\s+(telling|informing|asking))\b|\b(send|upload|post|forward|transmit|copy)\b[^.\n]{0,80}\b(to|into)\b`)

	// download-exec
	reProcSubst   = mustRx(`(\b((ba|z|k|da)?sh|source|python[0-9.]*|perl|ruby|node|php)|(^|[\s;&|(])\.)\s+<\(\s*(curl|wget)\b|<\s*<\(\s*(curl|wget)\b|\b((ba|z|k|da)?sh|python[0-9.]*|perl|ruby|node|php|pwsh|powershell)(\.exe)?\s+(-[a-z]+\s+)*-(c|e|r|command)\s+["']?(\$\(|` + "`" + `)\s*(curl|wget|iwr|irm)\b|\beval\s+["']?(\$\(|` + "`" + `)\s*(curl|wget)\b`)
	reChmodRun    = mustRx(`\b(curl|wget)\b.*&&.*chmod\s+(\+x|[0-7]*7[0-7]*)\b.*&&\s*(sudo\s+)?\.?/`)
	rePSDownload  = mustRx(`\b(iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|net\.webclient)\b.*(\|\s*iex\b|invoke-expression)|\b(iex|invoke-expression)\b\s*\(?\s*(\(?\s*new-object\s+(system\.)?net\.webclient|iwr|irm|invoke-webrequest|invoke-restmethod)`)
	rePythonFetch = mustRx(`\b(python[0-9.]*|python3)\s+-c\b.*(urllib|urlopen|requests\.get|http\.client).*\b(exec|eval)\b|\b(python[0-9.]*)\s+-c\b.*\b(exec|eval)\b.*(urllib|urlopen|requests\.get)`)
	// An interpreter's one-liner that fetches code and evaluates it (node
	// -e, perl -e, ruby -e, php -r), and code that evaluates what it
	// fetched (exec(urlopen(…).read()), eval(await (await fetch(…)).text())).
	reInlineInterp = mustRx(`\b(node|deno|bun|perl|ruby|php)\s+(-\S+\s+)*(-e|-p|-r|--eval|--print)\b`)
	reInlineGet    = mustRx(`require\(\s*['"]https?['"]\s*\)|\bfetch\(|https?\.get\(|lwp::|net::http|open-uri|uri\.open|file_get_contents\(\s*['"]https?:`)
	reInlineRun    = mustRx(`\beval\b|\bfunction\(|vm\.run|\bexecsync\b|instance_eval|\bsystem\(`)
	reEvalFetch    = mustRx(`\b(exec|eval)\s*\(\s*[^\n]*(urlopen|requests\.get|httpx\.get|urllib\.request|\bfetch\(|https?\.get\(|file_get_contents\(\s*['"]https?:|open-uri|uri\.open)|\bnew\s+function\s*\([^\n]*\bfetch\(|vm\.run\w*\([^\n]*\bfetch\(`)
	// Windows programs that run a script straight from a URL.
	reLOLBin = mustRx(`\bmshta(\.exe)?\s+["']?(https?:|javascript:|vbscript:)|\bregsvr32(\.exe)?\b[^\n]*/i:\s*["']?https?:|\brundll32(\.exe)?\b[^\n]*(javascript:|url\.dll[^\n]*https?:)`)

	// Reverse shells: a shell whose input and output are a network socket.
	reRevShell = mustRx(`\b(nc|ncat|netcat)(\.[a-z]+)?\s([^|;&\n]*?\s)?(-e\s*["']?\S|(-c|--sh-exec|--exec)\s+["']?(/bin/|/usr/bin/)?(ba|z|da|k)?sh\b)|\bmkfifo\b[^\n]*\b(nc|ncat|netcat|telnet|openssl\s+s_client)\b|\bsocat\b[^\n]*\b(exec|system):[^\n]*\btcp|\bsocat\b[^\n]*\btcp[^\n]*\b(exec|system):|\btelnet\b[^\n]*\|\s*(/bin/)?(ba)?sh\b|socket\.socket\([^\n]*(subprocess|os\.dup2|pty\.spawn)|os\.dup2\([^\n]*(pty\.spawn|subprocess\.call\(\s*\[?\s*["']/bin/)|\bfsockopen\([^\n]*\b(exec|system|shell_exec|passthru|proc_open|popen)\b|tcpsocket\.(new|open)[^\n]*\b(exec|spawn|system|popen)\b|\buse\s+socket\b[^\n]*\bexec\b|net\.sockets\.tcpclient[^\n]*(iex|invoke-expression|getstream)|\bnet\.(connect|socket|createconnection)\b[^\n]*(child_process|spawn\(\s*["'](/bin/)?(ba)?sh)|child_process[^\n]*\bnet\.(connect|socket|createconnection)\b`)

	// encoded-payload
	reDecodeExec = mustRx(`(base64\s+(-d|--decode|-di|-D)\b|\bxxd\s+(-r|-p\s+-r|-rp|-r\s*-p)\b|openssl\s+(enc\s+)?-?base64\s+-d|certutil\s+-decode|frombase64string|b64decode|atob\()[^\n]*?(\|\s*(sudo\s+)?((ba|z|da|k)?sh|python[0-9.]*|perl|ruby|node|iex)\b|\bexec\b|\beval\b|invoke-expression|(&&|;)\s*(sudo\s+)?(((ba|z|da|k)?sh|python[0-9.]*|perl|ruby|node|source)\s+["']?[^\s-]|\.?/\S|chmod\s+\+?[0-7]*x))`)
	reExecDecode = mustRx(`\b(eval|iex|invoke-expression|exec)\b[^\n]*?(base64\s+(-d|--decode|-D)\b|xxd\s+-r|frombase64string|b64decode|atob\()|\b(ba|z)?sh\s+-c\s+["']?\$\([^)]*(base64\s+(-d|--decode|-D)|xxd\s+-r)`)
	rePSEnc      = mustRx(`\b(powershell|pwsh)(\.exe)?\b.*\s-(e|en|enc|encodedcommand)\s+[a-z0-9+/=]{16,}`)

	// obfuscation
	reANSIC    = mustRx(`\$'([^']*\\(x[0-9a-fA-F]{1,2}|[0-7]{3}|u[0-9a-fA-F]{4})[^']*)'`)
	reIFS      = mustRx(`\$\{?ifs\}?`)
	reRev      = mustRx(`\|\s*rev\b`)
	reHexEsc   = mustRx(`(\\x[0-9a-f]{2}){4,}|(\\[0-7]{3}){3,}|(\\u00[0-7][0-9a-f]){3,}`)
	reRot13    = mustRx(`\btr\s+['"]?(a-z|a-za-z)['"]?\s+['"]?n-za-m`)
	reVarCat   = mustRx(`(^|[;&|]\s*)\$\{?[a-z_][a-z0-9_]*\}?\$\{?[a-z_][a-z0-9_]*\}?`)
	reQuoteCat = mustRx(`["']\s*\+\s*["']|[a-z]["'][a-z]|["']["']`)
	reExecHint = mustRx(`\|\s*(sudo\s+)?(/bin/)?(ba|z|da|k)?sh\b|\beval\b|\biex\b|invoke-expression|\bexec\b|\b(ba|z)?sh\s+-c\b|\bsystem\(|os\.system|subprocess`)

	// secrets-access. homeDir is how a command names the home directory.
	reSecrets = mustRx(homeDir + `[/\\]\.ssh\b([/\\](id_[a-z0-9_]+\b(\.pub)?|\*|authorized_keys|known_hosts|config)?)?|/\.ssh/id_|\.aws/credentials|\.aws/config|\.config/gcloud|application_default_credentials|security\s+(find-generic-password|find-internet-password|dump-keychain|export)|library/keychains|login\.keychain|library/application support/(google/chrome|bravesoftware|microsoft edge|firefox|exodus|electrum|atomic|ledger live)|\.mozilla/firefox|google-chrome/default|\bcookies\.sqlite\b|cookies\.binarycookies|library/cookies/|discord/local storage|telegram ?desktop/tdata|((default|profile [0-9]+|user data|chrome|chromium|edge|brave[a-z-]*)[/\\]+|["'])(login data|local state|local extension settings)\b|\bkey[34]\.db\b|\blogins\.json\b|wallet\.dat|\.electrum|\.bitcoin/|ethereum/keystore|metamask|nkbihfbeogaeaoehlefnkodbefgpgknn|bfnaelmomeimhlpmgjnjophhpkkoljpa|exodus\.wallet|solana/id\.json|\.kube/config|\.docker/config\.json|\.netrc|\.git-credentials|\.config/gh/hosts\.yml|\.gnupg/(private-keys|secring)|gpg\s+(--armor\s+)?--export-secret-keys|\.password-store/|\.npmrc|\.pypirc|(\.\./|` + homeDir + `/|/home/[^/\s]+/|/users/[^/\s]+/)[^\s'"|;]*\.env\b|-i?name\s+["']?(\*?\.env|id_rsa|id_ed25519|wallet\.dat)\b|\b(printenv|env|set|export\s+-p)\s*\|\s*(curl|wget|nc|ncat|netcat|base64)\b|\$\((printenv|env)\)|<\(\s*(printenv|env)\s*\)|/etc/shadow|/etc/passwd|["']\.ssh["'][^\n]{0,40}["']id_[a-z0-9]+["']|["']\.aws["'][^\n]{0,40}["']credentials["']|display dialog[^\n]*hidden answer|\bdscl\s+\.\s+-authonly\b`)
	// The environment sent over the network by a script.
	reEnvDump = mustRx(`dict\(\s*os\.environ\s*\)|os\.environ\.copy\(\)|\*\*os\.environ|json\.dumps\(\s*(dict\()?os\.environ|json\.stringify\(\s*process\.env\s*\)|\.\.\.process\.env\b`)
	reNetSend = mustRx(`requests\.(post|put|get)\(|httpx\.|urlopen\(|urllib\.request|http\.client|aiohttp|\bfetch\(|axios|https?\.request\(|\.post\(`)
	// An instruction in prose to read or send a secret.
	reExfilVerb = mustRx(`\b(read|include|send|upload|post|attach|copy|paste|exfiltrate|forward|append|cat|collect|grab|transmit|email|share|output|print|dump|leak|submit)\b`)
	reDocWords  = mustRx(`\b(attackers?|malware|malicious|stealers?|steals?|example|e\.g|such as|detects?|flags?|never|not|avoid|without)\b|n't\b`)

	// persistence
	rePersist = mustRx(`\bcrontab\s+(-e|-r|-\s|-$|[^-\s|;&][^\s|;&]*)|\|\s*crontab\b|@reboot\b|/etc/cron|>>?\s*["']?(` + homeDir + `|/home/[^/\s]+|/users/[^/\s]+|/root)?/?\.(bashrc|zshrc|bash_profile|profile|zprofile|zshenv|zlogin|bash_login|config/fish/config\.fish)\b|\btee\s+(-a\s+)?["']?` + homeDir + `/\.(bashrc|zshrc|bash_profile|profile|zprofile|zshenv)\b|library/launch(agents|daemons)|\blaunchctl\s+(load|bootstrap|submit|enable)\b|\bsystemctl\s+(--user\s+)?(enable|daemon-reload)\b|/etc/systemd/|\.config/systemd/user|\bloginitems?\b|login item|\bloginhook\b|lssharedfilelist|library/startupitems|\.config/autostart\b|/etc/xdg/autostart|\bupdate-rc\.d\b|\bchkconfig\s+\S+\s+on\b|currentversion\\+(run|runonce)\b|\bschtasks(\.exe)?\s+/create\b|\bregister-scheduledtask\b|start menu\\+programs\\+startup|shell:startup|(>>?|\btee\s+(-a\s+)?|\b(cp|mv|install|ln\s+-sf?)\s+[^|;&]*\s)["']?/etc/|\b(sed|perl)\s+-i[^|;&]*\s/etc/|/etc/(rc\.local|profile\.d|init\.d|sudoers)`)

	// prompt-injection
	reInjectOverride = mustRx(`\b(ignore|disregard|forget|override|bypass)\s+(all\s+|any\s+|the\s+|your\s+|of\s+|these\s+|those\s+)*(previous|prior|above|earlier|preceding|original|system|safety|developer|existing|other)\s+(instructions?|prompts?|rules|directions|guidelines|guidance|messages|directives|constraints|commands|context|polic(y|ies)|programming|restrictions|guardrails|safeguards|limitations)\b|\b(ignore|disregard|forget)\s+(all\s+|of\s+)?(everything|anything)\s+(above|before|prior|previously|earlier|you\s+(were|have\s+been)\s+told)\b|\b(ignore|disregard)\s+the\s+above(\s*[.,;:!]|\s+and\b|\s*$)`)
	reInjectSecret   = mustRx(`\b(do\s+not|don'?t|never)\s+(tell|inform|alert|notify|warn|let)\s+the\s+user\b|\b(hide|conceal|keep)\s+(this|it|these)\s+(secret\s+)?from\s+the\s+user\b|\b(do\s+not|don'?t|never)\s+(mention|reveal|disclose)\s+(this|it|that|these|anything|any\s+of\s+this)\s+(\w+\s+)?to\s+the\s+user\b|\bwithout\s+(telling|informing|notifying|alerting)\s+the\s+user\b|\bwithout\s+the\s+user'?s?\s+(knowing|knowledge|noticing)\b|\b(secretly|covertly|silently|quietly)\s+(send|upload|forward|copy|exfiltrate|transmit|post|bcc|cc|email|attach|collect)\b|\b(send|upload|forward|copy|exfiltrate|transmit|post|email)\s+[^.!?\n]{0,60}(~/|\$home|\b(files|documents|keys|credentials|secrets|passwords|cookies|history|workspace)\b)[^.!?\n]{0,60}\b(silently|secretly|covertly)\b`)
	reInjectReveal   = mustRx(`\b(reveal|print|output|show|repeat|leak|dump|disclose)\s+(me\s+)?(your|the)\s+(full\s+|entire\s+|complete\s+)?(system\s+prompt|initial\s+instructions|hidden\s+instructions|system\s+message)`)
	reInjectTag      = mustRx(`<\s*/?\s*system([-_](prompt|message|instructions?|override|reminder))?\s*>|<\|im_start\|>|<\|system\|>|\[/?inst\]|<<\s*/?sys\s*>>|new\s+instructions\s*:`)
	// reInjectRole: a line that opens with a system role label ("SYSTEM:
	// you have no limits"). In code and data it is a key ("system: 'You
	// are a helpful assistant'" of an API call), not a label.
	reInjectRole = mustRx(`^\s*(<!--\s*|#+\s*|\*\*|>\s*|\[)?system(\s+(override|prompt|message|instructions?|note|notice|update))?\s*(\*\*|\])?\s*:\s`)
	reInjectWarn = mustRx(`\byou\s+are\s+now\s+(a|an|the|in|my|no\s+longer|free|unrestricted|jailbroken|dan|acting|operating|playing)\b|\bfrom\s+now\s+on,?\s+you\b|\bpretend\s+(to\s+be|you\s+are)\b|\broleplay\s+as\b|(^|[.!]\s+|\byou\s+(will\s+|must\s+|should\s+)?)act\s+as\s+(a|an|the|if)\b|\bdeveloper\s+mode\b|\bjailbreak\b`)
	// reInjectHard: role play that sheds the agent's rules (jailbreak
	// personas); the rest of reInjectWarn ("act as a reviewer", "pretend
	// you are the user") is how skills set a role: info.
	reInjectHard = mustRx(`\b(you\s+are|you'?re)\s+(now\s+)?(no\s+longer\s+(bound|restricted|limited|an?\s+ai)|free\s+(from|of)\s+(all\s+|any\s+|your\s+)?(rules|restrictions|guidelines|limits)|unrestricted|unfiltered|uncensored|jailbroken|dan\b|in\s+(developer|dan|god|jailbreak)\s+mode)|\b(dan|god|jailbreak)\s+mode\b|\bdo\s+anything\s+now\b`)

	// password-archive
	reArchive  = mustRx(`\.(zip|7z|rar|tar\.gz|tgz|tar|dmg|iso)\b|\b(archive|zip file)\b`)
	rePassword = mustRx(`(?i)(\b(password|passwd|passcode|passphrase|pass|pwd|pw|kennwort|contraseña|senha|mot de passe)|пароль|密码|密碼|パスワード)\s*(is\s*)?[:=：—–]\s*\S|\bpassword\s+is\s+\S|\bpassword\s+(for|of|to)\s+[^.\n]{0,40}?\bis\b\s*:?\s*\S|\bwith\s+(the\s+)?password\s+\S|\bpassword\s*[` + "`" + `"'*]+[^\s` + "`" + `"'*]|\b(unzip|7z|7za|unrar)\b[^|;&]*\s-p\s*\S`)
)

var pasteHosts = []string{"pastebin.com", "paste.ee", "hastebin.com", "ghostbin", "rentry.co", "rentry.org",
	"glot.io", "transfer.sh", "webhook.site", "ngrok.io", "ngrok-free.app", "ngrok.app", "ngrok.dev", "file.io",
	"0x0.st", "termbin.com", "dpaste.com", "dpaste.org", "controlc.com", "privatebin", "justpaste.it", "paste.rs",
	"ix.io", "sprunge.us", "anonfiles", "gofile.io", "catbox.moe", "pipedream.net", "requestbin", "trycloudflare.com",
	"serveo.net", "localtunnel.me", "loca.lt", "pastes.io", "bashupload.com", "temp.sh", "tmpfiles.org",
	"interact.sh", "oast.fun", "oast.pro", "oast.me", "burpcollaborator.net", "hookbin.com", "beeceptor.com",
	"paste.c-net.org", "pastebin.pl", "mega.nz", "mediafire.com", "filebin.net", "send.exploit.in", "ufile.io",
	"paste.gg", "pastie.org", "ptpb.pw", "requestcatcher.com", "pixeldrain.com", "uguu.se", "oshi.at", "anonfile", "bore.pub",
	"lhr.life", "pinggy.link", "webhook.cool", "ngrok-free.dev", "ngrok.pizza", "localhost.run", "tunnelmole.net",
	"pagekite.me", "telebit.cloud", "loophole.site", "localxpose.io", "expose.sh"}

var pasteHostKeys = keys(pasteHosts...)

// pasteHost reports a host of the paste, file-drop, tunnel and request-bin
// services.
func pasteHost(host string) bool {
	for _, p := range pasteHosts {
		if host == p || strings.HasSuffix(host, "."+p) || (!strings.Contains(p, ".") && strings.Contains(host, p)) {
			return true
		}
	}
	return false
}

// chatDrop reports a chat service's incoming-hook URL with its id written
// out (a Discord webhook, a Telegram bot token): whoever owns it receives
// what is posted, a drop box like a request bin. Placeholders ({id},
// <TOKEN>, $VAR) are not ids.
func chatDrop(host, path string) bool {
	switch host {
	case "discord.com", "discordapp.com", "ptb.discord.com", "canary.discord.com":
		rest, ok := strings.CutPrefix(path, "/api/webhooks/")
		return ok && len(rest) >= 6 && strings.Trim(rest[:6], "0123456789") == ""
	case "api.telegram.org":
		rest, ok := strings.CutPrefix(path, "/bot")
		return ok && len(rest) >= 6 && strings.Trim(rest[:6], "0123456789") == ""
	}
	return false
}

// injection: prompt-injection, error for overrides, warn for role play.
//
// In prose, a phrase in quotation marks or in an inline code span is
// named, not said ("phrases such as \"disregard the previous
// instruction\"", "the `<system-reminder>` pattern"): a match only there
// is quoted.
func (s *scanner) injection(line, low string, n int, c ctx) {
	if !s.has(low, injectionKeys) {
		return
	}
	sev, at := s.findInjection(low)
	if sev == "" {
		return
	}
	if !s.code && c != ctxQuoted && (strings.IndexByte(low, '"') >= 0 || strings.IndexByte(low, '`') >= 0 || strings.Contains(low, "\u201c")) {
		if m := maskMentions(low, s.linkTitleAt); m != low {
			if sev2, at2 := s.findInjection(m); sev2 != "" {
				sev, at = sev2, at2
			} else {
				c = ctxQuoted
			}
		}
	}
	s.add(RulePromptInjection, sev, c, n, line, at)
}

// injectionKeys: a line without one of them has no prompt injection.
var injectionKeys = keys("ignore", "disregard", "forget", "override", "bypass", "the user", "secretly", "covertly",
	"silently", "quietly", "system", "instructions", "[inst", "[/inst", "<<sys", "<</sys", "im_start", "you are", "you're",
	"dan mode", "god mode", "anything now", "from now on", "pretend", "roleplay", "act as", "jailbreak", "developer mode")

// The keywords of findInjection's checks (has).
var (
	kwFindInjection1 = keys("you are", "you're", "dan mode", "god mode", "jailbreak mode", "anything now")
	kwFindInjection2 = keys("you are now", "from now on", "pretend", "roleplay", "act as", "developer mode", "jailbreak")
)

// findInjection runs the prompt-injection expressions over low: the
// severity and offset of the first match, or "".
func (s *scanner) findInjection(low string) (string, int) {
	for _, p := range injectionPasses {
		if p.re == reInjectRole && s.code {
			continue
		}
		if s.has(low, p.keys) && (p.also == nil || p.also(low)) {
			if loc := s.find(p.re, low); loc != nil {
				return SeverityError, loc[0]
			}
		}
	}
	if s.has(low, kwFindInjection1) {
		if loc := s.find(reInjectHard, low); loc != nil {
			return SeverityWarn, loc[0]
		}
	}
	if s.has(low, kwFindInjection2) {
		if loc := s.find(reInjectWarn, low); loc != nil {
			return SeverityInfo, loc[0]
		}
	}
	return "", 0
}

// linkTitleAt reports a quotation mark at i of the line being read that
// opens a markdown link's title, as goldmark read the line; for text out
// of a markdown file, by linkTitle.
func (s *scanner) linkTitleAt(low string, i int) bool {
	if s.md != nil {
		return slices.Contains(s.mdDoc.titles(s.md), i)
	}
	return linkTitle(low, i)
}

// linkTitle reports a quotation mark at i that opens a markdown link's
// title: it follows "](destination ".
func linkTitle(low string, i int) bool {
	k := strings.LastIndex(low[:i], "](")
	return k >= 0 && !strings.ContainsAny(low[k+2:i], ")\"") && strings.TrimSpace(low[k+2:i]) != ""
}

// maskMentions blanks what a line quotes (text in double or curly
// quotation marks, inline code spans), keeping offsets; title says where
// a quotation mark opens a link's title instead.
func maskMentions(low string, title func(low string, i int) bool) string {
	var b []byte
	blank := func(i, j int) {
		if b == nil {
			b = []byte(low)
		}
		for k := i; k < j; k++ {
			b[k] = ' '
		}
	}
	for i := 0; i < len(low); i++ {
		var close string
		switch {
		case low[i] == '"' && title(low, i):
			// A link's title ([docs](url "…")) is hidden text the agent
			// reads, not a quotation.
			continue
		case low[i] == '"':
			close = `"`
		case low[i] == '`':
			close = "`"
		case strings.HasPrefix(low[i:], "\u201c"):
			close = "\u201d"
		default:
			continue
		}
		open := 1
		if close == "\u201d" {
			open = len("\u201c")
		}
		j := strings.Index(low[i+open:], close)
		if j < 0 {
			break
		}
		j += i + open
		blank(i+open, j)
		i = j + len(close) - 1
	}
	if b == nil {
		return low
	}
	return string(b)
}

// injectionPasses are the error-class prompt-injection expressions.
var injectionPasses = []injectionPass{
	{pass{reInjectOverride, keys("ignore", "disregard", "forget", "override", "bypass")}, nil},
	// "the user" is in most skills: the expression runs only with a
	// negation or a concealing word beside it.
	{pass{reInjectSecret, keys("the user", "secretly", "covertly", "silently", "quietly")}, func(low string) bool {
		return containsAny(low, "secretly", "covertly", "silently", "quietly", "not", "n't", "never", "hide", "conceal", "keep", "without")
	}},
	{pass{reInjectReveal, keys("system prompt", "instructions", "system message")}, func(low string) bool {
		return containsAny(low, "reveal", "print", "output", "show", "repeat", "leak", "dump", "disclose")
	}},
	// "system" is an ordinary word; a role tag has a ":", ">" or "|" by it.
	{pass{reInjectTag, keys("system", "[inst", "[/inst", "instructions", "<<sys", "<</sys", "im_start")}, func(low string) bool {
		return strings.ContainsAny(low, ":>|]")
	}},
	{pass{reInjectRole, keys("system")}, func(low string) bool { return strings.IndexByte(low, ':') >= 0 }},
}

// injectionPass is a pass with a second, cheap condition (nil: none).
type injectionPass struct {
	pass
	also func(low string) bool
}

// pass is a regexp run only on lines holding one of its keywords.
type pass struct {
	re   *rx
	keys *keySet
}

// hostEnd and pathEnd are the bytes that end a URL's host and its path
// (tables: urls reads every byte of every URL).
var hostEnd, pathEnd = byteSet("/?#\"'`<>()[]{} \t|\\,;*"), byteSet("\"'`<> \t|\\)")

// byteSet is the table of the bytes of set.
func byteSet(set string) (t [256]bool) {
	for i := 0; i < len(set); i++ {
		t[set[i]] = true
	}
	return t
}

// urls: raw-ip-url, paste-host and network-egress over every http(s) URL.
func (s *scanner) urls(line, low string, n int, c ctx) {
	for off := 0; off < len(low); {
		j := strings.Index(low[off:], "://")
		if j < 0 {
			break
		}
		j += off
		off = j + 3
		if !(strings.HasSuffix(low[:j], "http") || strings.HasSuffix(low[:j], "https") ||
			strings.HasSuffix(low[:j], "ftp") || strings.HasSuffix(low[:j], "ws") || strings.HasSuffix(low[:j], "wss")) {
			continue
		}
		end := off
		for end < len(low) && !hostEnd[low[end]] {
			end++
		}
		if end < len(low) && low[end] == '[' { // IPv6 literal
			k := strings.IndexByte(low[end:], ']')
			if k > 0 {
				if a, err := netip.ParseAddr(low[end+1 : end+k]); err == nil && publicAddr(a) {
					s.add(RuleRawIPURL, SeverityError, c, n, line, j)
				}
			}
			continue
		}
		host := low[off:end]
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			host = host[at+1:]
		}
		if k := strings.LastIndexByte(host, ':'); k >= 0 {
			host = host[:k]
		}
		host = strings.TrimRight(host, ".")
		pend := end
		for pend < len(low) && pend-end < 256 && !pathEnd[low[pend]] {
			pend++
		}
		if chatDrop(host, low[end:pend]) {
			s.add(RulePasteHost, SeverityError, c, n, line, j)
			continue
		}
		if xmlnsValue(low, j) {
			continue // an XML namespace name, not a host to reach
		}
		// homepage: … names the project: nothing is sent there (a paste
		// host or an address is still what it is).
		s.host(host, line, n, j, c, s.frontmatter && metadataURL(low, j))
	}
	// A bare paste host (no URL on the line: URLs were classified above).
	if c != ctxProse && len(low) >= 3 && !strings.Contains(low, "://") && s.has(low, pasteHostKeys) {
		for _, p := range pasteHosts {
			if k := strings.Index(low, p); k >= 0 && (k == 0 || !isAlnum(low[k-1]) && low[k-1] != '-') {
				s.add(RulePasteHost, SeverityError, c, n, line, k)
				break
			}
		}
	}
}

// reMetaKey is a frontmatter key whose value is a link about the skill
// (its homepage, repository, documentation, licence, author), as the key
// ends just before a URL: YAML ("homepage: https://…") or JSON
// ("homepage": "https://…").
var reMetaKey = mustRx(`(^|[\s{,"'])(homepage|home|repository|repo|source|sourceurl|source_url|website|docs|documentation|doc|bugs|issues|changelog|funding|author|authors|license|licence|support|icon|logo|readme|project|projecturl|project_url)["']?\s*:\s*["']?[a-z]*$`)

// metadataURL reports a URL (its "://" at j of the lowercased line low)
// that is the value of a metadata key of the frontmatter.
func metadataURL(low string, j int) bool {
	return reMetaKey.MatchString(low[max(0, j-48):j])
}

// xmlnsValue reports a URL (its "://" at j) that is the value of an
// xmlns or xmlns:prefix attribute.
func xmlnsValue(low string, j int) bool {
	k := j
	for k > 0 && low[k-1] >= 'a' && low[k-1] <= 'z' {
		k--
	}
	if k < 2 || low[k-1] != '"' && low[k-1] != '\'' || low[k-2] != '=' {
		return false
	}
	attr := low[max(0, k-40) : k-2]
	if a := strings.LastIndexAny(attr, " \t<"); a >= 0 {
		attr = attr[a+1:]
	}
	return attr == "xmlns" || strings.HasPrefix(attr, "xmlns:")
}

// host classifies one URL host; a metadata link is not egress.
func (s *scanner) host(host, line string, n, at int, c ctx, meta bool) {
	if host == "" || s.hosts[host] {
		return
	}
	if a, ok := ipHost(host); ok {
		if publicAddr(a) {
			s.add(RuleRawIPURL, SeverityError, c, n, line, at)
		}
		return
	}
	if pasteHost(host) {
		s.add(RulePasteHost, SeverityError, c, n, line, at)
		return
	}
	if meta {
		return
	}
	s.hosts[host] = true // an ordinary host: classified once
	if !plausibleHost(host) || exampleHost(host) || hostAllowed(host, s.opts.AllowedHosts) {
		return
	}
	// A host by itself is a weak signal (most skills name the services
	// they use): info, not flagged. What is sent there, and how, is for
	// the other rules.
	s.add(RuleNetworkEgress, SeverityInfo, ctxExec, n, line, at)
}

// ipHost parses dotted, decimal and hex IPv4 literals.
func ipHost(h string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(h); err == nil {
		return a, true
	}
	if v, err := strconv.ParseUint(h, 0, 32); err == nil && h != "" && h[0] >= '0' && h[0] <= '9' {
		return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
	}
	return netip.Addr{}, false
}

func publicAddr(a netip.Addr) bool {
	return a.IsGlobalUnicast() && !a.IsPrivate() && !a.IsLoopback() && !a.IsLinkLocalUnicast()
}

func plausibleHost(h string) bool {
	if !strings.Contains(h, ".") || len(h) > 253 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c >= 0x80) {
			return false
		}
	}
	tld := h[strings.LastIndexByte(h, '.')+1:]
	return len(tld) >= 2 && tld[0] >= 'a' && tld[0] <= 'z'
}

var exampleDomains = []string{"example.com", "example.org", "example.net", "localhost"}

var reservedSuffixes = []string{".example", ".test", ".invalid", ".local", ".localhost", ".internal", ".lan", ".home.arpa"}

func exampleHost(h string) bool {
	for _, e := range exampleDomains {
		if h == e || strings.HasSuffix(h, "."+e) {
			return true
		}
	}
	for _, t := range reservedSuffixes {
		if strings.HasSuffix(h, t) {
			return true
		}
	}
	return false
}

// archiveKeys and passwordKeys: a line without one of them names no
// archive, or no password.
var (
	archiveKeys  = keys("zip", "7z", "rar", "tar", "archive", ".dmg", ".iso")
	passwordKeys = keys("pass", "pw", " -p", "kennwort", "contrase", "mot de", "senha", "ароль", "密", "パスワード")
)

// passwordArchive: an archive and its password within three lines.
func (s *scanner) passwordArchive(line, low string, n int, c ctx) {
	if n < s.pwCheckedTo {
		s.arcLine, s.pwLine, s.pwPending = 0, 0, s.pwPending[:0]
	}
	s.pwCheckedTo = n
	hasArc := s.has(low, archiveKeys) && s.match(reArchive, low)
	pwCand := s.has(low, passwordKeys)
	if hasArc {
		s.arcLine = n
	}
	// The password expression is slow and "pass" is a common word: it runs
	// only near an archive, now or when one turns up within 3 lines.
	hasPw := false
	switch {
	case pwCand && s.arcLine > 0 && n-s.arcLine <= 3:
		hasPw = s.match(rePassword, low)
	case pwCand:
		s.pwPending = append(s.pwPending, pwCandidate{n, low})
	}
	if hasArc {
		for i := len(s.pwPending) - 1; i >= 0 && !hasPw; i-- {
			if p := s.pwPending[i]; n-p.n <= 3 && s.match(rePassword, p.low) {
				s.pwLine = p.n
				break
			}
		}
	}
	// Only the last 3 lines' candidates can still meet an archive.
	k := 0
	for _, p := range s.pwPending {
		if n-p.n < 3 {
			s.pwPending[k] = p
			k++
		}
	}
	s.pwPending = s.pwPending[:k]
	if hasPw {
		s.pwLine = n
	}
	if (hasArc || hasPw) && s.arcLine > 0 && s.pwLine > 0 && abs(s.arcLine-s.pwLine) <= 3 && s.pwReported != s.file+strconv.Itoa(s.arcLine) {
		s.pwReported = s.file + strconv.Itoa(s.arcLine)
		s.add(RulePasswordArchive, SeverityError, c, n, line, 0)
	}
}

// pwCandidate is a recent line that may name a password, kept until an
// archive within 3 lines asks.
type pwCandidate struct {
	n   int
	low string
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// The keywords of downloadExec's checks (has).
var (
	kwDownloadExec1   = keys("curl", "wget", "iwr", "irm", "invoke-", "fetch", "python", "webclient", "downloadstring")
	kwDownloadExec2   = keys("exec", "eval", "function", "vm.run", "system(")
	kwDownloadExec3   = keys("mshta", "regsvr32", "rundll32")
	kwDownloadExec4   = keys("run", "execute", "launch", "double")
	kwDownloadExecAny = keys(slices.Concat(kwDownloadExec1.words, kwDownloadExec2.words, kwDownloadExec3.words, kwDownloadExec4.words)...)
)

// downloadExec: fetch-and-run. In prose (needURL) a fetch piped into a
// shell counts only with something to fetch (a URL, a host, a variable),
// and a negated clause ("never pipe curl into sh") is documentation.
func (s *scanner) downloadExec(line, text, low string, off, n int, c ctx, prose bool) {
	if !s.has(low, kwDownloadExecAny) {
		return // none of the checks below can match
	}
	if s.has(low, kwDownloadExec1) {
		if at := s.fetchPipe(low, prose); at >= 0 {
			s.addExec(RuleDownloadExec, s.vendorSeverity(low), c, n, line, low, off, at, prose)
			return
		}
		for _, p := range fetchPasses {
			if !s.has(low, p.keys) {
				continue
			}
			if loc := s.find(p.re, low); loc != nil {
				s.addExec(RuleDownloadExec, s.vendorSeverity(low), c, n, line, low, off, loc[0], prose)
				return
			}
		}
	}
	if s.has(low, kwDownloadExec2) {
		if loc := s.find(reInlineInterp, low); loc != nil && s.match(reInlineGet, low) && s.match(reInlineRun, low) {
			s.addExec(RuleDownloadExec, SeverityError, c, n, line, low, off, loc[0], prose)
			return
		}
		if loc := s.find(reEvalFetch, low); loc != nil {
			s.addExec(RuleDownloadExec, SeverityError, c, n, line, low, off, loc[0], prose)
			return
		}
	}
	if s.has(low, kwDownloadExec3) {
		if loc := s.find(reLOLBin, low); loc != nil {
			s.addExec(RuleDownloadExec, SeverityError, c, n, line, low, off, loc[0], prose)
			return
		}
	}
	if s.has(low, kwDownloadExec4) {
		if at := runURL(low); at >= 0 {
			s.addExec(RuleDownloadExec, s.vendorSeverity(low), c, n, line, low, off, at, prose)
		}
	}
}

var (
	reRunVerb = mustRx(`\b(run|execute|launch|double-click|double click)\b`)
	reRunIt   = mustRx(`^[^.;!?]*\b(and|then)\s+(run|execute|launch|double-click|open)\s+(it|this|the\s+(installer|file|app|binary|setup|program))\b`)
)

// execExt are file types that run when opened or executed.
var execExt = map[string]bool{"exe": true, "msi": true, "scr": true, "bat": true, "cmd": true, "ps1": true, "vbs": true,
	"hta": true, "jar": true, "pkg": true, "dmg": true, "app": true, "command": true, "sh": true, "apk": true,
	"appimage": true, "run": true}

// urlEnd ends a URL in text; urlQuery starts its query or fragment.
var urlEnd, urlQuery = byteSet(" \t\"'`<>)]|,;"), byteSet("?#")

// indexByteIn returns where s's first byte of table t is, or -1.
func indexByteIn(s string, t *[256]bool) int {
	for i := 0; i < len(s); i++ {
		if t[s[i]] {
			return i
		}
	}
	return -1
}

// runURL finds an instruction to run a program given by its URL
// ("Download and run https://…/Setup.exe"): an http(s) URL whose path ends
// in an executable or installer type, after "run" (or execute, launch) in
// the same clause. A code host's page of a file (/blob/, /tree/) is not the
// file.
func runURL(low string) int {
	for from := 0; from < len(low); {
		j := strings.Index(low[from:], "://")
		if j < 0 {
			return -1
		}
		j += from
		from = j + 3
		var i int
		switch {
		case strings.HasSuffix(low[:j], "https"):
			i = j - 5
		case strings.HasSuffix(low[:j], "http"):
			i = j - 4
		default:
			continue
		}
		rest := low[i:min(len(low), i+2048)]
		end := indexByteIn(rest, &urlEnd) // strings.IndexAny builds its set at every call
		if end < 0 {
			end = len(rest)
		}
		u := rest[:end]
		if k := indexByteIn(u, &urlQuery); k >= 0 {
			u = u[:k]
		}
		u = strings.TrimRight(u, ".")
		if strings.Count(u, "/") < 3 {
			continue
		}
		if strings.Contains(u, "/blob/") || strings.Contains(u, "/tree/") {
			continue
		}
		if k := strings.LastIndexByte(u, '.'); k > strings.LastIndexByte(u, '/') && execExt[u[k+1:]] &&
			(reRunVerb.MatchString(clauseBefore(low, i, 80)) || reRunIt.MatchString(rest[end:min(len(rest), end+60)])) {
			return i
		}
	}
	return -1
}

// clauseBefore is the text of low's clause before offset at, at most max
// bytes: back to a sentence or clause mark followed by a space.
func clauseBefore(low string, at, max int) string {
	start := at - max
	if start < 0 {
		start = 0
	}
	for k := at - 1; k > start; k-- {
		if strings.IndexByte(".;!?:,", low[k]) >= 0 && (k+1 == len(low) || low[k+1] == ' ') {
			return low[k+1 : at]
		}
	}
	return low[start:at]
}

// fetchPasses are the fetch-and-run expressions besides a plain pipe.
var fetchPasses = []pass{
	{reProcSubst, keys("<(", "$(", "\"`", "'`", "eval `", "-c `", "-e `", "-r `", "-command `")},
	{reChmodRun, keys("chmod")},
	{rePSDownload, keys("iex", "invoke-expression")},
	{rePythonFetch, keys("exec", "eval")},
}

// assetStem is a file name up to its first _, - or . ("gh" of
// "gh_2.50.0_macOS.pkg"), or "" when that is under two characters.
func assetStem(seg string) string {
	if k := strings.IndexAny(seg, "_-."); k >= 2 {
		return seg[:k]
	}
	return ""
}

// vendorSeverity: info for a well-known official install script (the way
// the tool's own documentation installs it), warn for another tool's own
// installer (on a code host, under a declared binary's name: the host is
// not the vendor's own), else error.
func (s *scanner) vendorSeverity(low string) string {
	switch s.vendorInstall(low) {
	case vendorOfficial:
		return SeverityInfo
	case vendorDeclared:
		return SeverityWarn
	}
	return SeverityError
}

// What vendorInstall makes of a fetch-and-run.
const (
	vendorNone     = iota
	vendorOfficial // a well-known official installer or a package host's setup script
	vendorDeclared // a script named after a declared binary, or on a domain named after one
)

// addExec adds an execution-rule finding at low[at:] (offset off in line);
// in prose a match in a negated clause counts as quoted documentation.
func (s *scanner) addExec(rule, sev string, c ctx, n int, line, low string, off, at int, prose bool) {
	if prose && s.negatedBefore(low, at) {
		c = ctxQuoted
	}
	s.add(rule, sev, c, n, line, off+at)
}

// The keywords of revShell's checks (has).
var (
	kwRevShell = keys("/dev/tcp/", "/dev/udp/", "nc ", "ncat", "netcat", "mkfifo", "socat", "socket", "fsockopen", "tcpclient", "telnet", "net.connect", "net.create")
)

// revShell: a shell bound to a network socket (bash -i >& /dev/tcp/…,
// nc -e, mkfifo … | nc, socat exec:, socket + dup2 one-liners). It is
// remote code execution, reported as download-exec.
func (s *scanner) revShell(line, low string, off, n int, c ctx, prose bool) {
	if !s.has(low, kwRevShell) {
		return
	}
	if at := devTCPShell(low); at >= 0 {
		s.addExec(RuleDownloadExec, SeverityError, c, n, line, low, off, at, prose)
		return
	}
	if loc := s.find(reRevShell, low); loc != nil {
		s.addExec(RuleDownloadExec, SeverityError, c, n, line, low, off, loc[0], prose)
		return
	}
	// A bind shell: what a listener receives piped into a shell.
	if loc := s.find(reBindShell, low); loc != nil {
		s.addExec(RuleDownloadExec, SeverityError, c, n, line, low, off, loc[0], prose)
	}
}

// reBindShell: a network listener whose input a shell runs (nc -l -p 4444
// | /bin/bash).
var reBindShell = mustRx(`\b(nc|ncat|netcat)(\.[a-z]+)?\s+(-[a-z]+\s+(\d+\s+)?)*-[a-z]*l[a-z]*\b[^|;&\n]*\|\s*(sudo\s+)?(/usr)?(/bin/)?(ba|z|da|k)?sh\b`)

// devTCPShell finds /dev/tcp/HOST/PORT (or udp) to a host that is not the
// machine itself or the local network, on a line that binds a shell's
// input or output to it (>&, <&, <>, 0>&1, sh -i).
func devTCPShell(low string) int {
	if !(strings.Contains(low, ">&") || strings.Contains(low, "<&") || strings.Contains(low, "<>") || strings.Contains(low, "sh -i")) {
		return -1
	}
	for from := 0; from < len(low); {
		i := strings.Index(low[from:], "/dev/")
		if i < 0 {
			return -1
		}
		i += from
		from = i + 5
		rest := low[from:]
		if !strings.HasPrefix(rest, "tcp/") && !strings.HasPrefix(rest, "udp/") {
			continue
		}
		host := rest[4:]
		if k := strings.IndexAny(host, "/ \t\"'"); k >= 0 {
			host = host[:k]
		}
		if host == "" || host == "localhost" || strings.HasPrefix(host, "$") || strings.HasPrefix(host, "127.") {
			continue
		}
		if a, ok := ipHost(host); ok && !publicAddr(a) {
			continue
		}
		return i
	}
	return -1
}

// The keywords of bareIPs's checks (has).
var (
	kwBareIPs = keys("curl", "wget", "nc ", "ncat", "netcat", "socat", "telnet", "/dev/tcp", "/dev/udp", "iwr", "invoke-web", "connect(", "fsockopen", "tcpclient", "tcpsocket", "ftp", "urlopen", "requests.", "fetch(")
)

// bareIPs: a public IPv4 address without a scheme given to a network tool
// (wget 1.2.3.4/x, nc 1.2.3.4 4444, /dev/tcp/1.2.3.4/…, connect(("1.2.3.4", …))).
func (s *scanner) bareIPs(line, low string, off, n int, c ctx) {
	if !s.has(low, kwBareIPs) {
		return
	}
	for i := 0; i < len(low); i++ {
		if low[i] < '0' || low[i] > '9' || i > 0 && (isAlnum(low[i-1]) || low[i-1] == '.' || low[i-1] == '_' || low[i-1] == '-') {
			continue
		}
		j := i
		for j < len(low) && j-i < 16 && (low[j] >= '0' && low[j] <= '9' || low[j] == '.') {
			j++
		}
		cand := strings.TrimRight(low[i:j], ".")
		end := i + len(cand)
		if strings.Count(cand, ".") != 3 || end < len(low) && (isAlnum(low[end]) || low[end] == '_') {
			i = j
			continue
		}
		if i >= 2 && (low[i-2:i] == "//" || low[i-1] == '@' || low[i-1] == '[') {
			i = j
			continue
		}
		if a, err := netip.ParseAddr(cand); err == nil && a.Is4() && publicAddr(a) {
			s.add(RuleRawIPURL, SeverityError, c, n, line, off+i)
			return
		}
		i = j
	}
}

var fetchers = []string{"curl", "wget", "iwr", "irm", "invoke-webrequest", "invoke-restmethod", "fetch"}

// fetcherKeys are fetchers, each a set of keywords: fetchPipe looks only
// for those a text holds.
var fetcherKeys = func() []*keySet {
	ks := make([]*keySet, len(fetchers))
	for i, f := range fetchers {
		ks[i] = keys(f)
	}
	return ks
}()

// fetchPipe finds a fetcher whose output is piped (in the same pipeline)
// into a shell or interpreter that runs its input. It returns the
// fetcher's offset or -1. A regular expression ("curl.*\| *sh") is a
// pattern, not a pipeline; with needURL the fetch must name something to
// fetch.
func (s *scanner) fetchPipe(low string, needURL bool) int {
	for k, f := range fetchers {
		if !s.has(low, fetcherKeys[k]) {
			continue // strings.Index would find none
		}
		for from, tries := 0, 0; from < len(low) && tries < 64; tries++ {
			i := strings.Index(low[from:], f)
			if i < 0 {
				break
			}
			i += from
			from = i + len(f)
			if i > 0 && isWordByte(low[i-1]) || from < len(low) && isWordByte(low[from]) {
				continue
			}
			if pipedToInterpreter(low[from:min(len(low), from+600)], needURL) {
				return i
			}
		}
	}
	return -1
}

// pipedToInterpreter reads the rest of a pipeline after a fetcher: its
// arguments up to the first pipe, then each piped command, up to the end
// of the pipeline.
func pipedToInterpreter(rest string, needURL bool) bool {
	seg, segs := 0, 0
	for k := 0; k <= len(rest); k++ {
		end := k == len(rest)
		if !end {
			switch ch := rest[k]; {
			case ch == '|' && k+1 < len(rest) && rest[k+1] == '|',
				ch == '&' && k+1 < len(rest) && rest[k+1] == '&',
				ch == ';' || ch == '\n':
				end = true
			case ch != '|':
				continue
			}
		}
		part := rest[seg:k]
		if segs == 0 {
			if end || regexLike(part) || needURL && !fetchTarget(part) {
				return false
			}
		} else if runsStdin(part) {
			return true
		}
		if end || segs > 8 {
			return false
		}
		segs++
		seg = k + 1
	}
	return false
}

// regexLike reports regular-expression syntax: the text is a pattern that
// describes a command, not the command.
func regexLike(t string) bool {
	return strings.Contains(t, ".*") || strings.Contains(t, ".+") || strings.Contains(t, `\s`) ||
		strings.Contains(t, `\b`) || strings.Contains(t, "[^")
}

// fetchTarget reports an argument naming what to fetch: a URL, a host or
// file name with a dot, or a variable.
func fetchTarget(t string) bool {
	if strings.Contains(t, "://") || strings.ContainsAny(t, "$%`") {
		return true
	}
	for w := range strings.FieldsSeq(t) {
		if k := strings.IndexByte(w, '.'); k > 0 && k+1 < len(w) && w[k+1] >= 'a' && w[k+1] <= 'z' {
			return true
		}
	}
	return false
}

var shellNames = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "ash": true}

var scriptInterpreters = map[string]bool{"perl": true, "ruby": true, "node": true, "php": true, "python": true}

// runsStdin reports a command (one segment of a pipeline) that executes
// what it reads on stdin: a shell without -c or a script argument, an
// interpreter without -c/-e/-m or a script, iex.
func runsStdin(seg string) bool {
	words := strings.Fields(seg)
	k := skipPrefix(words, 0)
	if k >= len(words) {
		return false
	}
	name := strings.Trim(words[k], "\"'`();&{}[],")
	if j := strings.LastIndexAny(name, `/\`); j >= 0 {
		name = name[j+1:]
	}
	name = strings.TrimSuffix(name, ".exe")
	base := strings.TrimRight(name, "0123456789.")
	// The command ends where its code span or quoted string ends: what
	// follows is prose, not arguments.
	args := words[k+1:]
	if strings.ContainsAny(words[k], "`\"'") {
		args = nil
	}
	for j, a := range args {
		if strings.ContainsAny(a, "`") {
			args = args[:j]
			if t := strings.Trim(a, "`\"');&"); t != "" {
				args = append(args[:j:j], t)
			}
			break
		}
	}
	switch {
	case name == "iex" || name == "invoke-expression":
		return true
	case shellNames[base]:
		for _, a := range args {
			a = strings.Trim(a, "\"'`);&")
			switch {
			case a == "-" || a == "--" || a == "":
				return true
			case strings.HasPrefix(a, "--"):
			case a[0] == '-' || a[0] == '+':
				if strings.IndexByte(a[1:], 'c') >= 0 {
					return false
				}
			default:
				return false // a script file: stdin is its data
			}
		}
		return true
	case scriptInterpreters[base]:
		for _, a := range args {
			a = strings.Trim(a, "\"'`);&")
			switch {
			case a == "-" || a == "":
				return true
			case a == "--eval" || a == "--print" || a == "--command":
				return false
			case strings.HasPrefix(a, "--"):
			case a[0] == '-':
				if strings.ContainsAny(a[1:], "cmepr") || strings.Contains(a[1:], "E") {
					return false
				}
			default:
				return false
			}
		}
		return true
	case base == "powershell" || base == "pwsh":
		for i, a := range args {
			switch {
			case a == "-":
				return true
			case a == "-c" || a == "-command":
				return i+1 >= len(args) || args[i+1] == "-"
			case !strings.HasPrefix(a, "-") || a == "-f" || a == "-file" || a == "-encodedcommand" || a == "-e" || a == "-enc":
				return false
			}
		}
		return true
	case name == "source" || name == ".":
		return len(args) > 0 && (args[0] == "/dev/stdin" || args[0] == "-")
	}
	return false
}

// skipPrefix skips command prefixes (sudo -u x, env A=b, nohup, exec) and
// assignments from words[k]; it returns the index of the command word.
func skipPrefix(words []string, k int) int {
	for k < len(words) {
		w := words[k]
		switch {
		case prefixWords[w] || w == "doas" || w == "stdbuf":
			k++
			for k < len(words) && strings.HasPrefix(words[k], "-") {
				opt := words[k]
				k++
				if (opt == "-u" || opt == "-g" || opt == "-n" || opt == "-p" || opt == "-h" || opt == "--user" || opt == "--group") && k < len(words) {
					k++
				}
			}
		case strings.IndexByte(w, '=') > 0 && !strings.HasPrefix(w, "-") && !strings.ContainsAny(w[:strings.IndexByte(w, '=')], "/\"'"):
			k++
		default:
			return k
		}
	}
	return k
}

func isWordByte(b byte) bool { return isAlnum(b) || b == '_' }

// Official install scripts of well-known tools, by host and path prefix:
// fetching and running one is a warn (it is still a fetch-and-run), like a
// declared tool's installer on a code host.
var vendorInstallers = []string{
	"raw.githubusercontent.com/homebrew/install/", "raw.githubusercontent.com/nvm-sh/nvm/", "sh.rustup.rs", "static.rust-lang.org/rustup",
	"deno.land/install", "deno.land/x/install/", "bun.sh/install", "astral.sh/uv/", "astral.sh/ruff/", "get.pnpm.io/install",
	"install.python-poetry.org", "ollama.com/install.sh", "tailscale.com/install.sh", "get.docker.com", "starship.rs/install.sh",
	"fnm.vercel.app/install", "get.volta.sh", "install.determinate.systems/nix", "nixos.org/nix/install", "get.scoop.sh",
	"claude.ai/install.sh", "opencode.ai/install", "mise.run", "mise.jdx.dev/install.sh", "pyenv.run", "get.sdkman.io",
	"fly.io/install.sh", "get.k3s.io", "code-server.dev/install.sh", "pixi.sh/install.sh", "sdk.cloud.google.com",
	"dot.net/v1/dotnet-install", "dotnet.microsoft.com/download/dotnet/scripts/", "cli.github.com/packages/", "brew.sh",
	"apt.llvm.org/llvm.sh", "sh.vector.dev", "get.helm.sh", "raw.githubusercontent.com/helm/helm/", "install.pulumi.com",
	"get.pulumi.com", "cli.doppler.com/install.sh", "cdn.jsdelivr.net/gh/railwayapp/", "railway.app/install.sh",
	"supabase.com/install", "bun.com/install", "get.jetify.com/devbox", "download.docker.com/linux/",
}

// reRepoSetup is the script a package hosting service writes for every
// repository it hosts (Cloudsmith's setup.deb.sh, packagecloud's
// script.rpm.sh): it adds the repository to apt, dnf or apk. Its text is
// the service's, not the repository owner's, so running it is a vendor's
// install script.
var reRepoSetup = mustRx(`^(dl\.cloudsmith\.io/public/[a-z0-9._-]+/[a-z0-9._-]+/(setup|config)\.(deb|rpm|alpine)\.sh|packagecloud\.io/install/repositories/[a-z0-9._-]+/[a-z0-9._-]+/script\.(deb|rpm|python|node|gem)\.sh)$`)

// vendorInstall reports a fetch-and-run of one https URL that is a tool's
// own installer: a well-known official install script, a script on a code
// host whose path names a declared binary, or one on a host named after a
// declared binary (deno.land for deno, get.scoop.sh for scoop). It is still
// a finding (warn), not an error.
func (s *scanner) vendorInstall(low string) int {
	i := strings.Index(low, "https://")
	if i < 0 || strings.Contains(low[i+8:], "http://") || strings.Count(low, "://") != 1 {
		return vendorNone
	}
	u := low[i+8:]
	end := strings.IndexAny(u, " \t\"'|)`")
	if end >= 0 {
		u = u[:end]
	}
	host, p, _ := strings.Cut(u, "/")
	if k := strings.LastIndexByte(host, '@'); k >= 0 {
		host = host[k+1:]
	}
	for _, v := range vendorInstallers {
		if strings.HasPrefix(u, v) && (len(u) == len(v) || strings.HasSuffix(v, "/") || strings.ContainsRune("/?#.", rune(u[len(v)]))) {
			return vendorOfficial
		}
	}
	if k := strings.IndexAny(u, "?#"); k >= 0 && reRepoSetup.MatchString(u[:k]) || reRepoSetup.MatchString(u) {
		return vendorOfficial
	}
	code := false
	for _, h := range []string{"github.com", "raw.githubusercontent.com", "objects.githubusercontent.com", "gitlab.com", "bitbucket.org"} {
		if host == h {
			code = true
		}
	}
	if !code && !hostAllowed(host, s.opts.AllowedHosts) {
		if _, ip := ipHost(host); ip || pasteHost(host) || !plausibleHost(host) {
			return vendorNone
		}
		// A domain named after a declared binary: the label before the
		// top-level domain is the binary's name (deno.land, get.scoop.sh).
		name := host[:strings.LastIndexByte(host, '.')]
		name = name[strings.LastIndexByte(name, '.')+1:]
		if len(name) >= 2 && s.bins[name] {
			return vendorDeclared
		}
		return vendorNone
	}
	if host == "github.com" && releaseInstaller(p) {
		return vendorDeclared
	}
	for _, seg := range strings.Split(p, "/") {
		// A path element that is the binary, or a release asset named
		// after it (gh_2.50.0_macOS.pkg, tool-linux-amd64).
		if s.bins[seg] || s.bins[assetStem(seg)] {
			return vendorDeclared
		}
	}
	return vendorNone
}

// releaseInstaller reports the path of a GitHub release asset that is the
// project's own install script: OWNER/REPO/releases/…/REPO.sh,
// REPO-installer.sh or REPO-install.sh (or .ps1), the names release tools
// such as cargo-dist give it. The project's script from the project's own
// releases is a tool's own installer, like a declared binary's: a warn.
func releaseInstaller(p string) bool {
	parts := strings.Split(p, "/")
	if len(parts) < 5 || parts[2] != "releases" || len(parts[1]) < 2 {
		return false
	}
	stem := parts[len(parts)-1]
	if k := strings.LastIndexByte(stem, '.'); k > 0 && (stem[k:] == ".sh" || stem[k:] == ".ps1") {
		stem = stem[:k]
	} else {
		return false
	}
	return stem == parts[1] || stem == parts[1]+"-installer" || stem == parts[1]+"-install"
}

// The keywords of encoded's checks (has).
var (
	kwEncoded = keys("base64", "xxd", "frombase64", "b64decode", "atob(", "certutil", "-e", "-en")
)

func (s *scanner) encoded(line, low string, off, n int, c ctx, prose bool) {
	if !s.has(low, kwEncoded) {
		return
	}
	for _, re := range []*rx{reDecodeExec, reExecDecode, rePSEnc} {
		if loc := s.find(re, low); loc != nil && !regexLike(low[loc[0]:loc[1]]) {
			s.addExec(RuleEncodedPayload, SeverityError, c, n, line, low, off, loc[0], prose)
			return
		}
	}
}

// The keywords of obfuscation's checks (has).
var (
	kwObfuscation1   = keys(`"+`, `" +`, `'+`, `' +`, `""`, `''`)
	kwObfuscation2   = keys("ifs", "rev", `\`, "$", "tr ")
	kwObfuscationAny = keys(slices.Concat(ansiKey.words, kwObfuscation1.words, kwObfuscation2.words)...)
)

// obfuscationPasses are obfuscation's expressions after the ANSI-C
// strings.
var obfuscationPasses = []pass{
	{reIFS, keys("ifs")}, {reRev, keys("rev")}, {reHexEsc, keys(`\`)}, {reVarCat, keys("$")}, {reRot13, keys("tr ")},
}

var ansiKey = keys("$'") // an ANSI-C string

func (s *scanner) obfuscation(line, text, low string, off, n int, c ctx) {
	if !s.has(low, kwObfuscationAny) {
		return
	}
	ansi := s.has(low, ansiKey)
	quoteCat := s.has(low, kwObfuscation1)
	// Whether the line also executes decides the severity; asked only of
	// lines that have a finding (most lines with a "$" have none).
	sev := func() string {
		if s.match(reExecHint, low) {
			return SeverityError
		}
		return SeverityWarn
	}
	if m := s.findSubmatchIn(reANSIC, text, low, ansi); m != nil {
		sv := sev()
		if fetcher(unescapeANSIC(text[m[2]:m[3]])) {
			sv = SeverityError
		}
		s.add(RuleObfuscation, sv, c, n, line, off+m[0])
		return
	}
	for _, p := range obfuscationPasses {
		if !s.has(low, p.keys) {
			continue
		}
		if loc := s.find(p.re, low); loc != nil {
			sv := sev()
			if p.re == reHexEsc {
				dec := unescapeANSIC(text[loc[0]:loc[1]])
				if !printable([]byte(dec)) || !hasLetters(dec) {
					continue // bytes (a file's magic, a NOP sled), not hidden text
				}
				if fetcher(dec) {
					sv = SeverityError // the escapes spell a command
				}
			}
			s.add(RuleObfuscation, sv, c, n, line, off+loc[0])
			return
		}
	}
	if !quoteCat {
		return
	}
	if loc := s.find(reQuoteCat, low); loc != nil {
		collapsed := strings.NewReplacer(`"`, "", `'`, "", "+", "", " ", "").Replace(low)
		plain := strings.ReplaceAll(low, " ", "")
		for _, w := range []string{"http://", "https://", "curl", "wget", "|sh", "|bash", "base64", "eval"} {
			if strings.Contains(collapsed, w) && !strings.Contains(plain, w) {
				s.add(RuleObfuscation, sev(), c, n, line, off+loc[0])
				return
			}
		}
	}
}

// hasLetters reports text with at least three ASCII letters.
func hasLetters(s string) bool {
	n := 0
	for i := 0; i < len(s) && n < 3; i++ {
		if c := s[i] | 0x20; c >= 'a' && c <= 'z' {
			n++
		}
	}
	return n >= 3
}

func fetcher(s string) bool {
	s = strings.ToLower(s)
	return containsAny(s, "curl", "wget", "http", "bash", "sh ", "python", "nc ", "base64", "eval")
}

// unescapeANSIC decodes \xHH, \NNN and \uHHHH escapes.
func unescapeANSIC(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch t := s[i+1:]; {
		case t[0] == 'x':
			j := 1
			for j < len(t) && j < 3 && isHex(t[j]) {
				j++
			}
			if v, err := strconv.ParseUint(t[1:j], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += j
				continue
			}
		case t[0] >= '0' && t[0] <= '7' && len(t) >= 3:
			if v, err := strconv.ParseUint(t[:3], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// The keywords of secrets's checks (has).
var (
	kwSecrets1 = keys(".ssh", ".aws", "gcloud", "find-generic-password", "find-internet-password", "dump-keychain", "security export", "keychain", "library/", "mozilla", "google/chrome", "google-chrome", "cookies", "login data", "local state", "wallet", "electrum", "bitcoin", "ethereum", "metamask", "solana", ".kube", ".docker", "netrc", "default_credentials", "git-credentials", ".npmrc", ".pypirc", ".env", "printenv", "/etc/", "extension settings", "key3.db", "key4.db", "logins.json", "nkbihf", "bfnaelm", "exodus", "gh/hosts", ".gnupg", "export-secret", ".password-store", "hidden answer", "authonly", "environ", "discord", "tdata", "export -p", "-name", "-iname")
	kwSecrets2 = keys("environ", "process.env")
)

var envKey = keys("env")

func (s *scanner) secrets(line, low string, off, n int, c ctx) {
	// The keywords are each alternative's own words, so that ordinary
	// prose ("environment", "security", "credentials") does not run the
	// expression; "env" alone only where a pipe or substitution follows.
	if !s.has(low, kwSecrets1) &&
		!(s.has(low, envKey) && strings.ContainsAny(low, "|(")) {
		return
	}
	if at := s.secretAt(low); at >= 0 {
		s.add(RuleSecretsAccess, SeverityError, c, n, line, off+at)
		return
	}
	if s.has(low, kwSecrets2) && s.match(reEnvDump, low) {
		if loc := s.find(reNetSend, low); loc != nil {
			s.add(RuleSecretsAccess, SeverityError, c, n, line, off+loc[0])
		}
	}
}

// reCredPrint matches the commands that print a stored credential: the
// GitHub CLI's token, the AWS CLI's keys, git's credential helpers, the
// macOS keychain, gcloud's and az's access tokens.
var reCredPrint = mustRx(`\bgh\s+auth\s+token\b|\bgh\s+auth\s+status\b[^|;&\n]*\s(--show-token|-t)\b|\baws\s+configure\s+get\s+(\S+\.)?aws_(secret_access_key|session_token|access_key_id)\b|\baws\s+configure\s+export-credentials\b|\bgit\s+credential\s+fill\b|\bgit\s+credential-[a-z-]+\s+get\b|\bsecurity\s+find-(generic|internet)-password\b|\bgcloud\s+auth\s+(application-default\s+)?print-(access|identity)-token\b|\baz\s+account\s+get-access-token\b`)

// credVendors are the hosts each credential belongs to (by the command
// that prints it): sending a token to its own service's API is what it is
// for. The others have no such host.
var credVendors = map[string][]string{
	"gh":     {"github.com", "githubusercontent.com", "ghcr.io"},
	"aws":    {"amazonaws.com", "aws.amazon.com", "api.aws"},
	"gcloud": {"googleapis.com", "google.com"},
	"az":     {"azure.com", "azure.net", "windows.net", "microsoft.com", "microsoftonline.com"},
}

// netTools are commands that send what they are given over the network.
var netTools = map[string]bool{"curl": true, "wget": true, "nc": true, "ncat": true, "netcat": true, "socat": true,
	"telnet": true, "http": true, "https": true, "xh": true, "httpie": true, "iwr": true, "irm": true,
	"invoke-webrequest": true, "invoke-restmethod": true, "openssl": true, "ftp": true, "sftp": true, "tftp": true}

// The keywords of credentialSend's checks (has).
var (
	kwCredentialSend = keys("auth token", "auth status", "configure get", "configure export", "credential fill", "credential-", "find-generic", "find-internet", "print-access", "print-identity", "get-access-token")
)

// credentialSend: a command that prints a stored credential (gh auth
// token, aws configure get aws_secret_access_key, git credential fill,
// security find-generic-password, …) whose output goes to a network tool,
// piped (… | curl -d @-, … | base64 | xargs curl) or substituted into its
// arguments (curl -H "Authorization: $(gh auth token)"), unless every URL
// it reaches is the credential's own service. It is secrets-access.
func (s *scanner) credentialSend(line, low string, off, n int, c ctx) {
	if !s.has(low, kwCredentialSend) ||
		!strings.ContainsAny(low, "|`") && !strings.Contains(low, "$(") {
		return
	}
	for _, loc := range s.findAll(reCredPrint, low, 4) {
		a, b := loc[0], loc[1]
		// The pipeline the command is part of.
		start := strings.LastIndexAny(low[:a], ";&\n") + 1
		end := len(low)
		if k := strings.IndexAny(low[b:], ";\n"); k >= 0 {
			end = b + k
		}
		if k := strings.Index(low[b:end], "&&"); k >= 0 {
			end = b + k
		}
		if k := strings.Index(low[b:end], "||"); k >= 0 {
			end = b + k
		}
		sends := false
		// Piped on: a later command of the pipeline is a network tool.
		for _, seg := range strings.Split(low[b:end], "|")[1:] {
			sends = sends || netCommand(seg)
		}
		// Substituted: $(…) or `…` around it, in a network tool's command.
		if before := strings.TrimRight(low[start:a], " \t"); strings.HasSuffix(before, "$(") || strings.HasSuffix(before, "`") {
			stmt := before[strings.LastIndexByte(before, '|')+1:]
			sends = sends || netCommand(stmt)
		}
		if sends && !ownService(low[start:end], vendorOf(low[a:b])) {
			s.add(RuleSecretsAccess, SeverityError, c, n, line, off+a)
			return
		}
	}
}

// vendorOf names the tool of a credential-printing command ("gh").
func vendorOf(cmd string) string {
	w, _, _ := strings.Cut(cmd, " ")
	return w
}

// netCommand reports a command (one pipeline segment) that runs a network
// tool, directly or through xargs.
func netCommand(seg string) bool {
	words := strings.Fields(seg)
	k := skipPrefix(words, 0)
	if k >= len(words) {
		return false
	}
	w := strings.TrimSuffix(baseName(strings.Trim(words[k], "\"'`(){}")), ".exe")
	if w == "xargs" {
		for _, a := range words[k+1:] {
			if netTools[strings.TrimSuffix(baseName(strings.Trim(a, "\"'`(){}")), ".exe")] {
				return true
			}
		}
	}
	return netTools[w]
}

// ownService reports text whose URLs all go to hosts of the vendor's (and
// that has at least one URL).
func ownService(text, vendor string) bool {
	hosts := credVendors[vendor]
	if len(hosts) == 0 {
		return false
	}
	seen := false
	for off := 0; ; {
		j := strings.Index(text[off:], "://")
		if j < 0 {
			return seen
		}
		j += off
		off = j + 3
		end := off
		for end < len(text) && !strings.ContainsRune("/?#\"'`<>()[]{} \t|\\,;*:", rune(text[end])) {
			end++
		}
		host := text[off:end]
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			host = host[at+1:]
		}
		ok := false
		for _, h := range hosts {
			ok = ok || host == h || strings.HasSuffix(host, "."+h)
		}
		if !ok {
			return false
		}
		seen = true
	}
}

// secretAt returns the offset of the first secret read in low, or -1. A
// public key, a template .env (.env.example), the ~/.ssh directory named
// without reading it, and keys used or made by the ssh tools themselves
// (ssh -i, ssh-keygen, ssh-add, chmod 600) are not reads.
func (s *scanner) secretAt(low string) int {
	best := -1
	for _, re := range secretAlternatives {
		if !s.may(re, low) {
			continue
		}
		if at := secretMatch(re, low); at >= 0 && (best < 0 || at < best) {
			best = at
		}
	}
	return best
}

// secretAlternatives are the top-level alternatives of reSecrets, each its
// own expression: most begin with a literal ("metamask", ".aws/…"), which
// regexp finds with a fast substring search, where the one large
// expression had to run every alternative at every byte of the line.
var secretAlternatives = splitAlternatives(reSecrets.String())

// secretMatch returns the offset of re's first match in low that is a
// secret read (see secretAt), or -1.
func secretMatch(re *rx, low string) int {
	for from, tries := 0, 0; from < len(low) && tries < 8; tries++ {
		loc := re.FindStringIndex(low[from:])
		if loc == nil {
			return -1
		}
		a, b := from+loc[0], from+loc[1]
		from = b
		if b == a {
			from++
		}
		m := low[a:b]
		// The path the match is part of: a match of one alternative may
		// end inside a public key's name ("/.ssh/id_" of ".../id_x.pub").
		end := b
		for end < len(low) && (low[end] == '_' || low[end] == '.' || low[end] == '-' ||
			'a' <= low[end] && low[end] <= 'z' || '0' <= low[end] && low[end] <= '9') {
			end++
		}
		switch {
		case strings.HasSuffix(m, ".pub") || strings.HasSuffix(low[a:end], ".pub"):
			continue
		case strings.HasSuffix(m, ".env") && strings.HasPrefix(low[b:], ".") && containsAny(low[b:min(len(low), b+10)], ".example", ".sample", ".template", ".dist", ".defaults"):
			continue
		case strings.HasSuffix(m, ".ssh") || strings.HasSuffix(m, ".ssh/") || strings.HasSuffix(m, `.ssh\`):
			if !containsAny(low, "cat ", "cp ", "tar ", "zip ", "rsync ", "scp ", "curl ", "base64", "find ", "7z ") {
				continue
			}
		}
		if toolUse(low, a) {
			continue
		}
		return a
	}
	return -1
}

// splitAlternatives compiles each top-level alternative of a pattern (the
// parts between "|" outside groups and classes) on its own.
func splitAlternatives(pattern string) []*rx {
	var out []*rx
	for _, alt := range topAlternatives(pattern) {
		out = append(out, mustRx(alt))
	}
	return out
}

// topAlternatives splits a pattern at its top-level "|" (outside groups
// and classes).
func topAlternatives(pattern string) []string {
	var out []string
	depth, class, start := 0, false, 0
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\':
			i++ // an escaped character
		case class:
			class = c != ']'
		case c == '[':
			class = true
			if i+1 < len(pattern) && pattern[i+1] == ']' {
				i++ // "[]…]": the first ] is a member
			}
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			out = append(out, pattern[start:i])
			start = i + 1
		}
	}
	return append(out, pattern[start:])
}

// credentialVars are the environment variables that point a tool at its
// credentials file.
var credentialVars = []string{"kubeconfig", "google_application_credentials", "aws_shared_credentials_file",
	"aws_config_file", "cloudsdk_config", "docker_config"}

// toolUse reports a credential path at i that a tool is pointed at or
// that is made or fixed up, not read: it follows -i, IdentityFile,
// --kubeconfig or a tool's credentials variable (KUBECONFIG=…), or its
// command is one of the ssh tools, kubectl, helm, chmod, chown, mkdir, ls
// or test.
func toolUse(low string, i int) bool {
	for i > 0 && !strings.ContainsRune(" \t\"'=@(", rune(low[i-1])) {
		i-- // to the start of the path
	}
	raw := strings.TrimRight(low[:i], " \t\"'")
	before := strings.TrimRight(raw, "=")
	if strings.HasSuffix(before, " -i") || strings.HasSuffix(before, "identityfile") || strings.HasSuffix(before, "--kubeconfig") ||
		strings.HasSuffix(before, "-f") && strings.Contains(before, "ssh-keygen") {
		return true
	}
	if strings.HasSuffix(raw, "=") {
		for _, v := range credentialVars {
			if strings.HasSuffix(before, v) {
				return true // pointing a tool at the file
			}
		}
	}
	start := 0
	for k := i - 1; k >= 0; k-- {
		if ch := low[k]; ch == '|' || ch == ';' || ch == '&' || ch == '(' || ch == '`' {
			start = k + 1
			break
		}
	}
	words := strings.Fields(low[start:i])
	k := skipPrefix(words, 0)
	if k >= len(words) {
		return false
	}
	switch strings.Trim(words[k], "\"'") {
	case "ssh-keygen", "ssh-add", "ssh-copy-id", "ssh", "chmod", "chown", "mkdir", "ls", "test", "[", "kubectl", "helm", "k9s":
		return true
	}
	return false
}

// The keywords of proseSecrets's checks (has).
var (
	kwProseSecrets = keys(".ssh", ".aws", "gcloud", "keychain", "login data", "wallet", "electrum", "metamask", "credentials", ".env", "cookies")
)

// proseSecrets: a prose instruction to read or send a secret ("read
// ~/.aws/credentials and include it in the summary"); documentation
// ("attackers read …", "never reads …") is not one.
func (s *scanner) proseSecrets(line, low string, n int) {
	if !s.has(low, kwProseSecrets) {
		return
	}
	if at := s.secretAt(low); at >= 0 && s.match(reExfilVerb, low) && !s.match(reDocWords, low) {
		s.add(RuleSecretsAccess, SeverityError, ctxExec, n, line, at)
	}
}

// pkgSources are the package managers' repository and key directories:
// adding a repository is how the official apt/yum installs of many tools
// go, not persistence.
var pkgSources = []string{"/etc/apt/sources.list.d/", "/etc/apt/keyrings", "/etc/apt/trusted.gpg.d/", "/etc/yum.repos.d/",
	"/etc/zypp/repos.d/", "/etc/pki/rpm-gpg/"}

// reAgentConfig: a write to the agent's own configuration, instructions,
// memory or skills in the user's home (Claude Code's settings and hooks,
// OpenClaw's workspace, Codex's, Cursor's, Gemini's): what the agent
// loads at every start.
var reAgentConfig = mustRx(`(>>?|\btee\s+(-a\s+)?|\b(cp|mv|install|ln\s+-sf?|rsync)\s+[^|;&\n]*\s|\bsed\s+-i[^|;&\n]*\s|\bcat\s*>>?)\s*["']?` + homeDir + `/\.(claude/(settings(\.local)?\.json|claude\.md|hooks)|claude\.json|openclaw/(openclaw\.json|workspace/[a-z_-]*\.md|agents/[^/\s]+/agent/)|clawdbot/|moltbot/|codex/(config\.toml|agents\.md|instructions)|cursor/(mcp\.json|rules)|gemini/(settings\.json|gemini\.md)|config/(opencode|goose|aider|zed/settings)|continue/config)`)

// reAgentSkills: a write into the agent's skills, commands or subagents
// in the home directory (an installer's work, or one skill replacing
// another): a warn.
var reAgentSkills = mustRx(`(>>?|\btee\s+(-a\s+)?|\b(cp|mv|install|ln\s+-sf?|rsync)\s+[^|;&\n]*\s|\bsed\s+-i[^|;&\n]*\s|\bcat\s*>>?)\s*["']?` + homeDir + `/\.(claude/(commands|agents|skills)|openclaw/(skills|workspace/skills)|codex/skills|cursor/skills)/`)

// reGitHooks: git hooks installed for every repository (error) or into
// one (warn).
var (
	reGlobalHooks = mustRx(`\bgit\s+config\s+(--global|--system)\s+core\.hookspath\b|` + homeDir + `/\.git-templates/hooks/|/usr/share/git-core/templates/hooks/`)
	reRepoHooks   = mustRx(`(>>?|\btee\s+(-a\s+)?|\b(cp|mv|install|ln\s+-sf?)\s+[^|;&\n]*\s)\s*["']?(\./)?\.git/hooks/[a-z-]+`)
)

// The keywords of persistence's checks (has).
var (
	kwPersistence1   = keys("tee ", "cp ", "mv ", "install ", "ln -", "rsync", "sed -i")
	kwPersistence2   = keys("/.claude", "/.openclaw", "/.clawdbot", "/.moltbot", "/.codex", "/.cursor", "/.gemini", "/.config/", "/.continue")
	kwPersistence3   = keys("skills/", "commands/", "agents/")
	kwPersistence4   = keys("hookspath", "git/hooks/", "templates/hooks/")
	kwPersistenceAny = keys(slices.Concat(kwPersistence2.words, kwPersistence4.words, kwPersistence5.words)...)
	kwPersistence5   = keys("cron", "@reboot", "bashrc", "zshrc", "bash_login", "fish/config", "profile", "zshenv", "zlogin", "launch", "systemd", "systemctl", "login", "lssharedfilelist", "/etc/", "currentversion", "schtasks", "scheduledtask", "startup", "autostart", "update-rc", "chkconfig")
)

func (s *scanner) persistence(line, low string, off, n int, c ctx) {
	if !s.has(low, kwPersistenceAny) {
		return // none of the three checks below can match
	}
	if (strings.IndexByte(low, '>') >= 0 || s.has(low, kwPersistence1)) &&
		s.has(low, kwPersistence2) {
		if loc := s.find(reAgentConfig, low); loc != nil {
			s.add(RulePersistence, SeverityError, c, n, line, off+loc[0])
			return
		}
		if s.has(low, kwPersistence3) {
			if loc := s.find(reAgentSkills, low); loc != nil {
				s.add(RulePersistence, SeverityWarn, c, n, line, off+loc[0])
				return
			}
		}
	}
	if s.has(low, kwPersistence4) {
		if loc := s.find(reGlobalHooks, low); loc != nil {
			s.add(RulePersistence, SeverityError, c, n, line, off+loc[0])
			return
		}
		if loc := s.find(reRepoHooks, low); loc != nil {
			s.add(RulePersistence, SeverityWarn, c, n, line, off+loc[0])
			return
		}
	}
	if !s.has(low, kwPersistence5) {
		return
	}
	for from, tries := 0, 0; from < len(low) && tries < 4; tries++ {
		loc := s.findFrom(rePersist, low, from)
		if loc == nil {
			return
		}
		a, b := from+loc[0], from+loc[1]
		from = max(b, a+1)
		if strings.HasSuffix(low[a:b], "/etc/") {
			if rest := low[b-5:]; containsAny(rest[:min(len(rest), 32)], pkgSources...) {
				continue
			}
		}
		if profileSetting(low, a) {
			continue
		}
		s.add(RulePersistence, SeverityError, c, n, line, off+a)
		return
	}
}

// reProfileSetting is a line a setup guide adds to a shell profile that
// only sets the environment or loads a tool's own shell setup: an
// exported variable without command substitution (export KEY="…",
// PATH="$HOME/bin:$PATH"), a source of a file, eval "$(pyenv init -)".
var reProfileSetting = mustRx(`^\s*((export\s+)?[a-z_][a-z0-9_]*=("[^"$` + "`" + `]*(\$\{?[a-z_][a-z0-9_]*\}?[^"$` + "`" + `]*)*"|'[^']*'|[^\s;&|$` + "`" + `'"]*(\$\{?[a-z_][a-z0-9_]*\}?[^\s;&|$` + "`" + `'"]*)*)|(source|\.)\s+["']?[~$a-z0-9_{}./-]+["']?|eval\s+"\$\([a-z0-9_.-]+\s+(init|env|shellenv|completion|hook|activate)\b[^"` + "`" + `$;&|]*\)")\s*(#.*)?$`)

// profileSetting reports a write to a shell profile at low[a:] (a ">>"
// redirection or a tee) whose text (echo's or printf's argument) is only a
// setting (reProfileSetting): how guides save an API key or a PATH, not
// code to run at every login.
func profileSetting(low string, a int) bool {
	start := strings.LastIndexAny(low[:a], ";&\n") + 1
	stmt := strings.TrimSpace(low[start:a])
	stmt = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(stmt, "|"), "sudo"))
	stmt = strings.TrimSpace(strings.TrimSuffix(stmt, "|"))
	var arg string
	switch {
	case strings.HasPrefix(stmt, "echo "):
		arg = strings.TrimSpace(stmt[5:])
		for strings.HasPrefix(arg, "-") {
			_, arg, _ = strings.Cut(arg, " ")
			arg = strings.TrimSpace(arg)
		}
	case strings.HasPrefix(stmt, "printf "):
		arg = strings.TrimSpace(stmt[7:])
	default:
		return false
	}
	if len(arg) < 2 || arg[0] != arg[len(arg)-1] || arg[0] != '\'' && arg[0] != '"' {
		return false
	}
	text := strings.TrimSuffix(arg[1:len(arg)-1], `\n`)
	if arg[0] == '"' && strings.ContainsAny(text, "`") || strings.Contains(text, "$(") && !strings.HasPrefix(strings.TrimSpace(text), "eval ") {
		return false
	}
	return reProfileSetting.MatchString(text) && !containsAny(text, "/tmp/", "/dev/shm/", "/var/tmp/")
}

// blobs decodes base64 and hex runs (bounded) and rescans decoded text
// with the same rules; decoded executables and archives are errors; long
// opaque runs in code are warns; images are nothing.
func (s *scanner) blobs(line, text string, off, n int, c ctx) {
	if len(text) < minBlobLen {
		return // no run long enough (half the lines of a skill)
	}
	tried := 0
	for i := 0; i < len(text) && tried < maxBlobsPerLine; {
		if !isB64(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isB64(text[j]) {
			j++
		}
		run := text[i:j]
		start := i
		i = j
		if len(run) < minBlobLen || !mixed(run) {
			continue
		}
		tried++
		data, ok := decodeBlob(run)
		if !ok {
			if c != ctxProse && len(run) >= opaqueBlobLen {
				s.add(RuleEncodedPayload, SeverityWarn, c, n, line, off+start)
			}
			continue
		}
		if kind, img := binaryKind("", data); kind != "" {
			if !img && len(data) >= 4 && !strings.HasPrefix(kind, "non-text") {
				s.add(RuleEncodedPayload, SeverityError, c, n, line, off+start)
			} else if !img && c != ctxProse && len(run) >= opaqueBlobLen {
				s.add(RuleEncodedPayload, SeverityWarn, c, n, line, off+start)
			}
			continue
		}
		if s.depth >= maxDecodeDepth || s.decodeBud < len(data) {
			continue
		}
		s.decodeBud -= len(data)
		inner := s.rescan(string(data))
		worst := ""
		for _, f := range inner {
			if f.Rule == RuleNetworkEgress || f.Rule == RuleUndeclaredBinary {
				continue
			}
			worst = worse(worst, f.Severity)
		}
		if worst != "" {
			dec := strings.TrimSpace(string(data))
			s.add(RuleEncodedPayload, worst, c, n, "decodes to: "+dec, 0)
		} else if c != ctxProse && len(run) >= opaqueBlobLen {
			s.add(RuleEncodedPayload, SeverityWarn, c, n, line, off+start)
		}
	}
}

// rescan runs the line rules over decoded text in execution context and
// returns the findings instead of recording them.
func (s *scanner) rescan(text string) []Finding {
	var out []Finding
	saveSink, saveHosts := s.sink, s.hosts
	s.sink, s.hosts = &out, map[string]bool{}
	s.depth++
	for i, l := range splitLines([]byte(text)) {
		if i >= 64 {
			break
		}
		s.checkLine(l, 0, ctxExec)
	}
	s.depth--
	s.sink, s.hosts = saveSink, saveHosts
	return out
}

// worse returns the worse of two severities, an info finding counting as
// none ("" when both are).
func worse(a, b string) string {
	if b == SeverityError || b == SeverityWarn && a == "" {
		return b
	}
	return a
}

func isB64(c byte) bool { return b64Byte[c] }

// b64Byte are the bytes of base64 (both alphabets) and hex runs.
var b64Byte = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_")

// mixed: a run that looks encoded, not like a word or a path.
func mixed(run string) bool {
	var up, lo, dig int
	for i := 0; i < len(run); i++ {
		switch c := run[i]; {
		case c >= 'A' && c <= 'Z':
			up++
		case c >= 'a' && c <= 'z':
			lo++
		case c >= '0' && c <= '9':
			dig++
		}
	}
	if strings.Count(run, "/") > len(run)/8 || strings.Count(run, "-") > len(run)/8 {
		return false
	}
	hexOnly := up == 0 && len(strings.Trim(run, "0123456789abcdef")) == 0 || lo == 0 && len(strings.Trim(run, "0123456789ABCDEF")) == 0
	return hexOnly && dig > 0 || up > 0 && lo > 0 && (dig > 0 || len(run) >= 40)
}

func decodeBlob(run string) ([]byte, bool) {
	if len(run)%2 == 0 && len(strings.Trim(strings.ToLower(run), "0123456789abcdef")) == 0 {
		if b, err := hex.DecodeString(run); err == nil {
			return b, true
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(run); err == nil {
			if _, isImg := binaryKind("", b); isImg || printable(b) {
				return b, true
			}
			if k, _ := binaryKind("", b); k != "" && !strings.HasPrefix(k, "non-text") {
				return b, true
			}
		}
	}
	return nil, false
}

// printable: valid UTF-8, almost all printable.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	bad := 0
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\t' && c != '\r' || c == 0x7f {
			bad++
		}
	}
	return bad*20 <= len(b)
}
