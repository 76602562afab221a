# The manager's container image, for machines with a container engine:
#
#   make docker-build                      # docker build for this machine's architecture
#   docker buildx build --platform linux/amd64,linux/arm64 --build-arg VERSION=v0.1.0 .
#
# The image holds the static manager binary at /manager, the CA bundle, and nothing else; it runs
# as user 65532. `make image` builds the same layout without a container engine and without
# pulling anything (hack/image.sh, hack/image/Containerfile); docs/image.md compares the two.
ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS builder
ARG TARGETOS=linux
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /workspace
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w -buildid= -X main.version=${VERSION}" -o /manager .

FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.title="cluster-api-provider-openstack (multi-AZ)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=builder /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=builder /manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
