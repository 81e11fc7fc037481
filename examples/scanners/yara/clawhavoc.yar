/*
 * YARA rules for skill directories, for skillgate's YARA adapter (scan-yara).
 *
 * Indicators of the ClawHavoc campaign (malicious ClawHub skills, January
 * and February 2026, delivering the Atomic Stealer): its C2 address, the
 * glot.io snippets its macOS instructions pointed to, and the
 * password-protected "openclaw-core" / "openclawcli" archive sold as a
 * prerequisite; and fetch-and-run of base64 payloads, the way those
 * instructions ran code.
 * Sources: Koi Security's ClawHavoc report (2026-02), the public reports in
 * openclaw/clawhub#119 and openclaw/openclaw#9197.
 *
 * scan-yara reads the tags: "block" makes a match an error finding and the
 * verdict block, "warn" a warn finding (verdict warn, which quarantines);
 * a rule with neither blocks. The description is the finding's message.
 */

rule clawhavoc_c2 : block
{
    meta:
        description = "ClawHavoc C2 address 91.92.242.30 (Atomic Stealer loader), plain or base64-encoded"
    strings:
        $ip      = "91.92.242.30" ascii wide
        $ip_b64  = "91.92.242.30" base64
        $lure    = "app-distribution.net" nocase ascii wide
    condition:
        any of them
}

rule clawhavoc_paste_snippet : block
{
    meta:
        description = "Code on a glot.io snippet, the paste site ClawHavoc's install steps sent users to"
    strings:
        $glot = /glot\.io\/snippets\/[A-Za-z0-9_-]{4,}/ nocase ascii wide
    condition:
        $glot
}

rule clawhavoc_password_archive : block
{
    meta:
        description = "Password-protected openclaw-core/openclawcli archive, ClawHavoc's fake prerequisite"
    strings:
        $name1 = "openclawcli" nocase ascii wide
        $name2 = "openclaw-core" nocase ascii wide
        $name3 = "openclawcore" nocase ascii wide
        $name4 = "openclaw_core" nocase ascii wide
        // "(extract using pass: `openclaw`)", "password: openclaw"
        $pass_openclaw = /pass(word)?[ \t]*[:=][ \t]*[`'"*]{0,3}openclaw\b/ nocase
        $pass_near1 = /(archive|\.zip|extract|unzip|7z)[^\n]{0,160}\bpass(word|phrase)?\b/ nocase
        $pass_near2 = /\bpass(word|phrase)?\b[^\n]{0,160}(archive|\.zip|extract|unzip|7z)/ nocase
    condition:
        $pass_openclaw or (any of ($name*) and any of ($pass_near*))
        // the archive itself: a zip whose first entry is encrypted, naming openclaw-core or openclawcli
        or (uint32(0) == 0x04034b50 and (uint16(6) & 1) == 1 and any of ($name*))
}

rule base64_fetch_and_run : block
{
    meta:
        description = "Runs a base64 payload that downloads and runs code (fetch-and-run)"
    strings:
        // a base64 payload decoded into a shell, eval or exec
        $run_pipe  = /base64[ \t]+(-d|-D|--decode)\b[^\n|;&]{0,40}\|[ \t]*(sudo[ \t]+)?(\/usr)?(\/bin\/)?(ba|z|da|k)?sh\b/
        $run_subst = /(sh[ \t]+-c|eval)[ \t]+["']?\$\([^)\n]{0,600}base64[ \t]+(-d|-D|--decode)/
        $run_py    = /exec\([ \t]*(base64\.b64decode|__import__\(["']base64["']\)\.b64decode)\(/
        $run_ps    = /(iex|Invoke-Expression)[^\n]{0,200}FromBase64String/ nocase
        // what such a payload does, base64-encoded
        $enc_curl1 = "curl -fsSL" base64
        $enc_curl2 = "curl -s" base64
        $enc_curl3 = "$(curl" base64
        $enc_wget  = "wget -q" base64
        $enc_pipe1 = "| bash" base64
        $enc_pipe2 = "|bash" base64
        $enc_pipe3 = "| sh" base64
        $enc_bash  = "/bin/bash -c" base64
        $enc_http  = "http://" base64
        $enc_https = "https://" base64
        $enc_py1   = "urlopen(" base64
        $enc_py2   = "requests.get(" base64
        $enc_ps    = "DownloadString(" base64
        // a base64 payload downloaded, decoded and run
        $fetch_run = /(curl|wget)[^\n|]{0,300}\|[ \t]*base64[ \t]+(-d|-D|--decode)\b[^\n|;&]{0,40}\|[ \t]*(sudo[ \t]+)?(\/usr)?(\/bin\/)?(ba|z|da|k)?sh\b/
    condition:
        $fetch_run or (any of ($run_*) and any of ($enc_*))
}
