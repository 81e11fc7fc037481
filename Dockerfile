# syntax=docker/dockerfile:1
# The skillgate gateway as a container image: a static binary on distroless,
# run as a non-root user, without a shell. See docs/deploy.md.
#
#   docker build -t skillgate .
#   docker run -p 7780:7780 -e SKILLGATE_AGENT_TOKEN -e SKILLGATE_NODE_TOKEN \
#     -e AWS_ACCESS_KEY_ID -e AWS_SECRET_ACCESS_KEY \
#     skillgate --store 's3://skills?endpoint=https://ACCOUNT.r2.cloudflarestorage.com&region=auto'
#
# The entrypoint is `skillgate serve --listen 0.0.0.0:7780`: arguments given
# to `docker run` are more serve flags (--store, --config, …); a later
# --listen wins, and so does this one over "gateway.listen" in a config file.
# Listening beyond loopback, the gateway refuses to start without both an
# agent token and a node token (environment or config file).
#
# The version (`docker run --entrypoint /usr/local/bin/skillgate IMAGE version`)
# comes from the build information: the commit of the .git directory in the
# build context, or --build-arg VERSION=1.2.3 to set it outright.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
# Stamp the commit when the context holds a usable git repository (a clone,
# not a worktree whose .git points outside the context); else build without.
# safe.directory: the context's files may belong to another uid than the
# builder's (git then refuses the repository, and go build with it).
RUN set -eu; \
    export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0=/src; \
    if git rev-parse --verify -q HEAD >/dev/null 2>&1; then vcs=true; else vcs=false; fi; \
    CGO_ENABLED=0 go build -trimpath -buildvcs=$vcs \
      -ldflags "-s -w -X github.com/skillgate/skillgate/internal/version.stamp=${VERSION}" \
      -o /out/skillgate ./cmd/skillgate; \
    /out/skillgate version

FROM gcr.io/distroless/static-debian12:nonroot
# distroless/static: CA certificates (for R2/S3 over HTTPS) and tzdata, no
# shell, no package manager. 65532 is its "nonroot" user.
COPY --from=build /out/skillgate /usr/local/bin/skillgate
USER 65532:65532
EXPOSE 7780
ENTRYPOINT ["/usr/local/bin/skillgate", "serve", "--listen", "0.0.0.0:7780"]
