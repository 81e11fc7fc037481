package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// credChain is what the AWS credential chain settled on when the store was
// made. aws-sdk-go-v2 picks one source at start, in a fixed order
// (environment keys, web identity from the environment, the profile of
// the shared files, container credentials, EC2 instance metadata), and
// only that source is ever asked: so the sources before it are the ones
// it tried and found empty, and naming them tells an operator where the
// gateway looked.
type credChain struct {
	chosen string   // the source the chain uses, in words
	keys   string   // where that source's keys are set, for hints
	passed []string // the sources before it, each with why it had none
}

// Names of the chain's sources in the words of the messages.
const (
	envKeysName = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
	imdsName    = "the EC2 instance metadata service (IMDS)"
)

// resolveChain describes the chain of awsCfg from the provider's sources
// and the environment the SDK read. It reads only variable names and
// whether files exist: never a key.
func resolveChain(static bool, awsCfg aws.Config) credChain {
	if static {
		return credChain{chosen: "the keys given to the store", keys: "the access key id and secret key given to the store"}
	}
	var first aws.CredentialSource
	if ps, ok := awsCfg.Credentials.(aws.CredentialProviderSource); ok {
		if src := ps.ProviderSources(); len(src) > 0 {
			first = src[0]
		}
	}
	profile := cmp.Or(os.Getenv("AWS_PROFILE"), os.Getenv("AWS_DEFAULT_PROFILE"), "default")
	env := envKeysState()
	webID := "web identity from the environment: AWS_WEB_IDENTITY_TOKEN_FILE is unset"
	prof := fmt.Sprintf("profile %q of the shared files (%s): %s", profile, sharedFilesName(), sharedFilesState())
	container := "container credentials: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and AWS_CONTAINER_CREDENTIALS_FULL_URI are unset"
	profileKeys := fmt.Sprintf("aws_access_key_id and aws_secret_access_key of profile %q", profile)
	switch first {
	case aws.CredentialSourceCode:
		return credChain{chosen: "the keys given to the store", keys: "the access key id and secret key given to the store"}
	case aws.CredentialSourceEnvVars:
		return credChain{chosen: "the environment (" + envKeysName + ")", keys: envKeysName}
	case aws.CredentialSourceEnvVarsSTSWebIDToken:
		return credChain{chosen: "web identity (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN)", keys: "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN",
			passed: []string{env}}
	case aws.CredentialSourceHTTP:
		return credChain{chosen: "the container credentials endpoint (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or AWS_CONTAINER_CREDENTIALS_FULL_URI)",
			keys: "the task or pod role", passed: []string{env, webID, prof}}
	case aws.CredentialSourceIMDS:
		return credChain{chosen: imdsName, keys: "the instance's IAM role", passed: []string{env, webID, prof, container}}
	case aws.CredentialSourceUndefined:
		return credChain{chosen: "the AWS credential chain", keys: envKeysName + " (or AWS_PROFILE)"}
	}
	// Every other source starts from the profile: keys, SSO, a process,
	// a role to assume.
	return credChain{chosen: fmt.Sprintf("profile %q of the shared files (%s)", profile, sharedFilesName()), keys: profileKeys,
		passed: []string{env, webID}}
}

// envKeysState says why the environment gave no keys: a variable set
// without its pair is the usual slip.
func envKeysState() string {
	id := os.Getenv("AWS_ACCESS_KEY_ID") != "" || os.Getenv("AWS_ACCESS_KEY") != ""
	secret := os.Getenv("AWS_SECRET_ACCESS_KEY") != "" || os.Getenv("AWS_SECRET_KEY") != ""
	switch {
	case id && !secret:
		return "the environment: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"
	case !id && secret:
		return "the environment: AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"
	}
	return "the environment: " + envKeysName + " are unset"
}

// sharedFilesName names the shared files as the operator would set them,
// never as an absolute path (which names the gateway's home).
func sharedFilesName() string {
	creds, cfg := "~/.aws/credentials", "~/.aws/config"
	if os.Getenv("AWS_SHARED_CREDENTIALS_FILE") != "" {
		creds = "$AWS_SHARED_CREDENTIALS_FILE"
	}
	if os.Getenv("AWS_CONFIG_FILE") != "" {
		cfg = "$AWS_CONFIG_FILE"
	}
	return creds + ", " + cfg
}

func sharedFilesState() string {
	creds := cmp.Or(os.Getenv("AWS_SHARED_CREDENTIALS_FILE"), config.DefaultSharedCredentialsFilename())
	cfg := cmp.Or(os.Getenv("AWS_CONFIG_FILE"), config.DefaultSharedConfigFilename())
	if !exists(creds) && !exists(cfg) {
		return "no such files"
	}
	return "no credentials in them for this profile"
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// noCredentials explains a failure of the chain to produce credentials:
// every source it tried, and what the one it settled on said.
func (s *S3) noCredentials(err error) error {
	c := s.chain
	what := "failed"
	switch msg := err.Error(); {
	case strings.Contains(msg, "AWS_EC2_METADATA_DISABLED"):
		what = "disabled by AWS_EC2_METADATA_DISABLED"
	case strings.Contains(msg, "no EC2 IMDS role found"):
		what = "no instance role found (not on EC2, or no role attached)"
	}
	tried := append(append([]string{}, c.passed...), c.chosen+": "+what)
	cause := "no AWS credentials: the AWS credential chain tried " + strings.Join(tried, "; ")
	return &Error{Err: fmt.Errorf("s3 credentials: %w", err), Problem: Problem{
		Cause:  cause,
		Detail: cause + " (" + err.Error() + ")",
		Hint: "set " + envKeysName + " in the gateway's environment (systemd: Environment= or EnvironmentFile=), " +
			"or AWS_PROFILE naming a profile of ~/.aws/credentials, or give the instance, task or pod a role",
	}}
}

// explain attaches a Problem to a failed request of the store: which
// bucket, endpoint or credentials, and what to check.
func (s *S3) explain(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	var ae smithy.APIError
	code, msg := "", ""
	if errors.As(err, &ae) {
		code, msg = ae.ErrorCode(), ae.ErrorMessage()
	}
	status := httpStatus(err)
	said := "" // the service's own words, for Detail (its code is in Cause)
	if msg != "" {
		said = ": " + msg
	}
	var p Problem
	switch {
	case code == "NoSuchBucket":
		p.Cause = fmt.Sprintf("bucket %q does not exist", s.bucket)
		p.Detail = p.Cause + " " + s.where()
		p.Hint = fmt.Sprintf("create bucket %q, or correct the bucket in --store (s3://BUCKET?endpoint=…); check that endpoint= names the right service", s.bucket)
	case code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "InvalidToken" ||
		code == "ExpiredToken" || code == "TokenRefreshRequired" || code == "InvalidClientTokenId":
		p.Cause = fmt.Sprintf("the storage service refused the credentials from %s (%s)", s.chain.chosen, code)
		p.Detail = p.Cause + " " + s.where() + said + s.passedText()
		switch code {
		case "InvalidAccessKeyId", "InvalidClientTokenId":
			p.Hint = "the access key id is unknown to this service: check " + s.chain.keys + ", and that the keys were made for the service at endpoint= (R2, S3 and MinIO keys are not interchangeable)"
		case "SignatureDoesNotMatch":
			p.Hint = "the secret key does not belong to the access key id: check " + s.chain.keys + " (a secret pasted with a missing or extra character is the usual cause)"
		default:
			p.Hint = "the session token is expired or invalid: renew the credentials (AWS_SESSION_TOKEN, or the profile's SSO login)"
		}
	case code == "AccessDenied" || code == "AllAccessDisabled" || (code == "" && status == 403):
		p.Cause = fmt.Sprintf("the storage service denied the credentials from %s access to bucket %q (%s)", s.chain.chosen, s.bucket, cmp.Or(code, "403"))
		p.Detail = p.Cause + " " + s.where() + said
		p.Hint = fmt.Sprintf("allow these credentials to list bucket %q and read its objects (s3:ListBucket, s3:GetObject), or use keys that may", s.bucket)
	case code == "PermanentRedirect" || code == "AuthorizationHeaderMalformed" || code == "IllegalLocationConstraintException":
		p.Cause = fmt.Sprintf("bucket %q is not in region %q, which the gateway signs for (%s)", s.bucket, s.region, code)
		p.Detail = p.Cause + " " + s.where() + said
		p.Hint = "set region= in --store (or AWS_REGION) to the bucket's region"
	case code != "":
		p.Cause = fmt.Sprintf("the storage service answered %s (HTTP %d)", code, status)
		p.Detail = p.Cause + " " + s.where() + said
		p.Hint = "see the gateway log for the full error"
	case isUnreachable(err):
		p.Cause = "cannot reach the storage endpoint"
		p.Detail = "cannot reach the storage endpoint " + s.endpointName() + ": " + netReason(err)
		p.Hint = "check endpoint= in --store, and that the storage service is up and reachable from the gateway"
	default:
		return err // Explain words it by its kind
	}
	return &Error{Problem: p, Err: err}
}

// passedText names, for refused credentials, the sources the chain passed
// over before the one it used: the keys an operator set elsewhere are
// not the ones sent.
func (s *S3) passedText() string {
	if len(s.chain.passed) == 0 {
		return ""
	}
	return "; the AWS credential chain found nothing in " + strings.Join(s.chain.passed, "; ") + " before it"
}

// where says which service a request went to: the endpoint (for the
// log and the agent endpoints, not the open /readyz).
func (s *S3) where() string {
	if s.endpoint != "" {
		return "at " + s.endpoint
	}
	return "on AWS S3 (region " + s.region + ")"
}

func (s *S3) endpointName() string {
	if s.endpoint != "" {
		return s.endpoint
	}
	return "of AWS S3 (region " + s.region + ")"
}

// isUnreachable reports whether a request failed before any answer: the
// connection, DNS or TLS.
func isUnreachable(err error) bool {
	var rse *smithyhttp.RequestSendError
	var oe *net.OpError
	var de *net.DNSError
	return errors.As(err, &rse) || errors.As(err, &oe) || errors.As(err, &de)
}

// netReason is the network's own words for a failed request: "dial tcp
// 127.0.0.1:9000: connect: connection refused".
func netReason(err error) string {
	var oe *net.OpError
	var de *net.DNSError
	switch {
	case errors.As(err, &de):
		return de.Error()
	case errors.As(err, &oe):
		return oe.Error()
	}
	return err.Error()
}
