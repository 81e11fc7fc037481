package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/logging"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Timeouts and pool sizes of the S3 HTTP client.
const (
	s3RequestTimeout   = 30 * time.Second // a whole request, body included
	s3MaxIdleConnsHost = 32               // above catalog.Loader's fetch concurrency
)

// S3Config configures an S3-compatible store (Cloudflare R2, AWS S3, MinIO).
type S3Config struct {
	Bucket string
	// Endpoint is the service's base URL, e.g.
	// "https://<account>.r2.cloudflarestorage.com" or "http://127.0.0.1:9000".
	// Empty means AWS S3 (or AWS_ENDPOINT_URL[_S3] from the environment).
	Endpoint string
	// Region is the signing region. Empty means the standard AWS chain
	// (AWS_REGION, the profile), and then "auto" when Endpoint is set, which
	// is what R2 expects and what MinIO accepts.
	Region string
	// PathStyle addresses the bucket as ENDPOINT/BUCKET/KEY instead of
	// BUCKET.ENDPOINT/KEY. MinIO needs it.
	PathStyle bool
	// AccessKeyID and SecretAccessKey are optional static credentials; when
	// both are empty the standard AWS chain is used (AWS_ACCESS_KEY_ID and
	// AWS_SECRET_ACCESS_KEY, AWS_PROFILE, …).
	AccessKeyID     string
	SecretAccessKey string
	// Logger receives the AWS SDK's own log lines (a retry, a checksum
	// it could not check), at warn or debug. Nil means slog.Default().
	Logger *slog.Logger
}

// S3 is a Store backed by an S3-compatible bucket.
type S3 struct {
	client *s3.Client
	bucket string
	// For explaining failures (s3problem.go): where requests go, the
	// credentials the client signs with and how the chain found them.
	endpoint, region string
	creds            aws.CredentialsProvider
	chain            credChain
}

// NewS3 returns the store of an S3-compatible bucket. It makes no request:
// a wrong endpoint or missing credentials show on the first List or Get.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3 store: the bucket name is empty")
	}
	if cfg.Endpoint != "" {
		if err := checkEndpoint(cfg.Endpoint); err != nil {
			return nil, fmt.Errorf("s3 store: %w", err)
		}
	}
	if (cfg.AccessKeyID == "") != (cfg.SecretAccessKey == "") {
		return nil, errors.New("s3 store: set both the access key id and the secret access key, or neither (to use the standard AWS credential chain)")
	}

	httpClient := awshttp.NewBuildableClient().
		WithTimeout(s3RequestTimeout).
		WithTransportOptions(func(tr *http.Transport) { tr.MaxIdleConnsPerHost = s3MaxIdleConnsHost })
	opts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(httpClient),
		// R2 and MinIO reject or ignore the CRC checksums the SDK adds by
		// default since 2025; send and check them only where S3 requires.
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	} else if cfg.Endpoint != "" {
		opts = append(opts, config.WithDefaultRegion("auto"))
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	// The SDK's default logger writes plain text to stderr; ClientLogMode
	// stays 0 (no request or response dumps, which would carry
	// signatures), so only its warnings come through.
	opts = append(opts, config.WithLogger(sdkLogger{log.With("bucket", cfg.Bucket)}))
	if cfg.AccessKeyID != "" {
		opts = append(opts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, "")))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3 store: loading AWS configuration: %w", err)
	}
	if awsCfg.Region == "" {
		return nil, errors.New("s3 store: no region: set region= in the store URL or AWS_REGION")
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
	})
	st := &S3{client: client, bucket: cfg.Bucket, endpoint: cfg.Endpoint, region: awsCfg.Region, creds: awsCfg.Credentials,
		chain: resolveChain(cfg.AccessKeyID != "", awsCfg)}
	if st.endpoint == "" && awsCfg.BaseEndpoint != nil {
		st.endpoint = *awsCfg.BaseEndpoint // AWS_ENDPOINT_URL
	}
	return st, nil
}

// sdkLogger hands the AWS SDK's log lines to slog.
type sdkLogger struct{ log *slog.Logger }

func (l sdkLogger) Logf(c logging.Classification, format string, v ...any) {
	level := slog.LevelDebug
	if c == logging.Warn {
		level = slog.LevelWarn
	}
	l.log.Log(context.Background(), level, "s3 store: aws sdk: "+fmt.Sprintf(format, v...))
}

// checkCredentials asks the credential chain (cached: no request once it
// has them) before a request, so that a chain that finds none is told
// apart from a refusal by the service, and explained.
func (s *S3) checkCredentials(ctx context.Context) error {
	if s.creds == nil {
		return nil
	}
	if _, err := s.creds.Retrieve(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return s.noCredentials(err)
	}
	return nil
}

// Bucket returns the bucket's name.
func (s *S3) Bucket() string { return s.bucket }

// List returns every key under prefix, sorted by key, following
// ListObjectsV2 pagination to the end.
func (s *S3) List(ctx context.Context, prefix string) ([]Object, error) {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket)}
	if prefix != "" {
		in.Prefix = aws.String(prefix)
	}
	if err := s.checkCredentials(ctx); err != nil {
		return nil, fmt.Errorf("s3 list s3://%s/%s: %w", s.bucket, prefix, err)
	}
	objs := []Object{}
	pages := s3.NewListObjectsV2Paginator(s.client, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("s3 list s3://%s/%s: %w", s.bucket, prefix, s.explain(err))
		}
		for _, o := range page.Contents {
			objs = append(objs, Object{
				Key:  aws.ToString(o.Key),
				Size: aws.ToInt64(o.Size),
				ETag: quoteETag(aws.ToString(o.ETag)),
			})
		}
	}
	// S3 lists in UTF-8 byte order already; sorting keeps the contract for
	// services that might not.
	if !slices.IsSortedFunc(objs, compareKeys) {
		slices.SortFunc(objs, compareKeys)
	}
	return objs, nil
}

func compareKeys(a, b Object) int { return strings.Compare(a.Key, b.Key) }

// Get reads a key with a conditional GetObject: when etag is not empty and
// still current, the service answers 304 and Get returns ErrNotModified.
func (s *S3) Get(ctx context.Context, key, etag string) ([]byte, string, error) {
	if err := ValidateKey(key); err != nil {
		return nil, "", fmt.Errorf("s3 get %q: %w", key, err)
	}
	if err := s.checkCredentials(ctx); err != nil {
		return nil, "", fmt.Errorf("s3 get %s: %w", key, err)
	}
	in := &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)}
	if etag != "" {
		in.IfNoneMatch = aws.String(etag)
	}
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		switch status := httpStatus(err); {
		case status == http.StatusNotModified:
			return nil, etag, fmt.Errorf("s3 get %s: %w", key, ErrNotModified)
		case status == http.StatusNotFound || isNoSuchKey(err):
			return nil, "", fmt.Errorf("s3 get %s: %w", key, ErrNotFound)
		}
		return nil, "", fmt.Errorf("s3 get %s: %w", key, s.explain(err))
	}
	defer out.Body.Close()
	if n := aws.ToInt64(out.ContentLength); n > MaxFileSize {
		return nil, "", fmt.Errorf("s3 get %s: %d bytes: %w", key, n, ErrTooLarge)
	}
	body, err := io.ReadAll(io.LimitReader(out.Body, MaxFileSize+1))
	if err != nil {
		return nil, "", fmt.Errorf("s3 get %s: reading body: %w", key, err)
	}
	if len(body) > MaxFileSize {
		return nil, "", fmt.Errorf("s3 get %s: %w", key, ErrTooLarge)
	}
	return body, quoteETag(aws.ToString(out.ETag)), nil
}

// Put writes body to key. It is for tooling and tests (seeding a bucket);
// the gateway only reads.
func (s *S3) Put(ctx context.Context, key string, body []byte) error {
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(key),
		Body:          bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))),
	})
	if err != nil {
		return fmt.Errorf("s3 put %s: %w", key, err)
	}
	return nil
}

// CreateBucket makes the bucket, for tooling and tests; a bucket that
// already exists and is ours is not an error.
func (s *S3) CreateBucket(ctx context.Context) error {
	_, err := s.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(s.bucket)})
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return fmt.Errorf("s3 create bucket %s: %w", s.bucket, err)
	}
	return nil
}

// Delete removes key. Deleting a missing key is not an error (S3 semantics).
func (s *S3) Delete(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(key),
	})
	if err != nil {
		return fmt.Errorf("s3 delete %s: %w", key, err)
	}
	return nil
}

// checkEndpoint checks that an endpoint is an http or https base URL.
func checkEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("endpoint %q: expected a URL like https://HOST or http://HOST:PORT", Redact(endpoint))
	}
	if u.User != nil {
		// It would end up in logs and on /readyz.
		return errors.New("endpoint: credentials in the URL are not accepted; use AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE")
	}
	return nil
}

// httpStatus returns the HTTP status code of a failed SDK call, or 0.
func httpStatus(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func isNoSuchKey(err error) bool {
	var nsk *types.NoSuchKey
	return errors.As(err, &nsk)
}

// quoteETag returns an ETag in its quoted HTTP form, whatever form the
// service used, so that List and Get agree.
func quoteETag(etag string) string {
	if etag == "" || strings.HasPrefix(etag, `"`) || strings.HasPrefix(etag, `W/"`) {
		return etag
	}
	return `"` + etag + `"`
}
