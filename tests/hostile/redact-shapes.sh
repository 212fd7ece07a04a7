#!/bin/bash
# SPDX-License-Identifier: MIT
# Secrets without a secret-looking name (issue 12, item 9): shell tool
# calls through a real `rakazoctl serve` and guestd whose command lines
# carry a password option (mysql -pX, sshpass -p X, curl -u user:X,
# curl --user=user:X, redis-cli -a X, docker login -p X, openssl's
# pass:X, aws configure set aws_secret_access_key X), a secret long
# option (--token X, --password X and their = forms), a DB_PASS=X
# assignment, an API key known by its prefix, a JWT, a Vault token, a PEM
# private key, a Slack webhook or a presigned URL's signature.
# None of the secret values may reach serve's log, guestd's log, the
# activity API or any file of the controller's data directory (SQLite and
# its WAL included), while the rest of each command still does: the
# redaction hides the secret, not the command.
. "${top_srcdir:-.}/tests/lib.sh"
. "${top_srcdir:-.}/tests/lib-controller.sh"

# Each secret is unique so that a hit names its shape.
SK=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zQ7
SKANT=sk-ant-api03-Xy7Zq2Wv9Ut4Sr1Pq6On3Ml8Kj5Ih0GfEdCbA-aBcD
GHP=ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R
GHO=gho_9Z8y7X6w5V4u3T2s1R0q9P8o7N6m5L4k3J2i
PAT=github_pat_11ABCDEFG0123456789_abcdefghijklmnopQRS
XOXB=xoxb-123456789012-1234567890123-AbCdEfGhIjKl
XOXP=xoxp-2222222222-3333333333-4444444444-ZyXwVu
AKIA=AKIAIOSFODNN7EXQMPLE
HVS=hvs.CAESIJlWhXyZ1234abcdEFGHijklMNOP9
JWT=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk
# "value|command" pairs; the commands run nothing that prints (":",
# "true"), and hold no '"' or '\', so they go into JSON as they are.
CASES=(
	"MyS3cretPw1|: mysql -uroot -pMyS3cretPw1 shopdb"
	"MaRia0Pass|: mariadb-dump -p'MaRia0Pass' shopdb"
	"CurlPa55w0rd|: curl -s -u alice:CurlPa55w0rd http://h.invalid/x"
	"UserPa55Long|: curl --user bob:UserPa55Long http://h.invalid/y"
	"SshPassXyz7|: sshpass -p SshPassXyz7 ssh -p 2222 deploy@h.invalid"
	"R3disAuthQ|: redis-cli -a R3disAuthQ ping"
	"TokSecret123|: gh-tool --token TokSecret123 --verbose"
	"PwSecret456|: app --password PwSecret456 -v"
	"TokEq789z|: app --token=TokEq789z --user=carol"
	"PwEq012z|: app --password=PwEq012z --user=dave"
	"DbPassAbc9|DB_PASS=DbPassAbc9 true"
	"MyPwdVal3|MYSQL_PWD=MyPwdVal3 true"
	"SmtpVal4|SMTP_PASS=SmtpVal4 true"
	"${SK#sk-}|: openai-cli use $SK"
	"${SKANT#sk-ant-}|: claude --key-from-arg $SKANT"
	"${GHP#ghp_}|: git-push-with $GHP"
	"${GHO#gho_}|: gh-oauth $GHO"
	"${PAT#github_pat_}|: gh-pat $PAT"
	"${XOXB#xoxb-}|: slack-post $XOXB"
	"${XOXP#xoxp-}|: slack-user $XOXP"
	"${AKIA#AKIA}|: aws-configure $AKIA us-east-1"
	"$JWT|: call-api $JWT /v1/me"
	# issue 26, item 5
	"CurlEqPw1|: curl --user=carol:CurlEqPw1 http://h.invalid/z"
	"DockLogin2|: docker login -u bob -p DockLogin2 reg.invalid"
	"OsslPass3|: openssl enc -aes-256-cbc -pass pass:OsslPass3 -in f"
	"AwsConf4|: aws configure set aws_secret_access_key AwsConf4"
	"PemBody5xyz|: -----BEGIN RSA PRIVATE KEY----- PemBody5xyz -----END RSA PRIVATE KEY-----"
	"SlackHook6|: notify https://hooks.slack.com/services/T01/B02/SlackHook6"
	"AzSig7val|: fetch 'https://a.blob.core.windows.net/c/b?sv=1&sig=AzSig7val&sp=r'"
	"AmzSig8val|: fetch 'https://b.s3.amazonaws.com/k?X-Amz-Date=1&X-Amz-Signature=AmzSig8val'"
	"${HVS#hvs.}|: vault-use $HVS"
)
# What must survive: the commands' non-secret parts.
KEEP=(
	"mysql -uroot -p" "shopdb" "curl -s -u alice:" "http://h.invalid/x"
	"sshpass -p" "ssh -p 2222 deploy@h.invalid" "redis-cli -a"
	"gh-tool --token" "--verbose" "app --password" "--user=carol"
	"DB_PASS=" "openai-cli use sk-" "git-push-with ghp_" "slack-post xoxb-"
	"aws-configure AKIA" "us-east-1" "call-api" "/v1/me"
	"curl --user=carol:" "docker login -u bob -p" "reg.invalid"
	"-pass pass:" "-in f" "aws configure set aws_secret_access_key"
	"-----BEGIN RSA PRIVATE KEY-----" "-----END RSA PRIVATE KEY-----"
	"https://hooks.slack.com/services/" "X-Amz-Signature=" "vault-use hvs."
)

ctl_start
api POST /v1/computers '{"id":"rs","start":true}' >/dev/null
for c in "${CASES[@]}"; do
	cmd=${c#*|}
	r=$(api POST /v1/tools/shell \
	    "{\"computer\":\"rs\",\"bot\":\"b\",\"command\":\"$cmd\"}")
	t_contains "$r" "200 " "shell: $cmd"
done
api GET "/v1/computers/rs/activity?limit=1000" >/dev/null
cp "$T/api.out" "$T/activity.json"
GLOG="$CTL_DATA/computers/rs/guestd.log"
[ -s "$GLOG" ] || t_fail "no guestd log"
t_contains "$(cat "$GLOG")" "event=exec" "guestd logged the commands"

# Every secret: in no log, no activity event, no file of the data dir.
for c in "${CASES[@]}"; do
	v=${c%%|*}
	for f in "$CTL_LOG" "$GLOG" "$T/activity.json"; do
		grep -aqF -- "$v" "$f" && t_fail "secret $v in $f"
	done
	hit=$(grep -rlaF -- "$v" "$CTL_DATA" 2>/dev/null | head -1)
	[ -z "$hit" ] || t_fail "secret $v stored in $hit"
done

# The commands are still there, secrets masked.
act=$(cat "$T/activity.json")
for k in "${KEEP[@]}"; do
	t_contains "$act" "$k" "activity keeps the command"
done
t_contains "$act" "-p[REDACTED] shopdb" "mysql password masked in place"
t_contains "$act" "alice:[REDACTED]" "curl password masked in place"
t_contains "$(cat "$GLOG")" "mysql -uroot -p[REDACTED] shopdb" \
    "guestd's log keeps the command"
exit 0
