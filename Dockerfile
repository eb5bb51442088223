# kueue-ks container image.
#   docker build -t kueue-ks:dev .        (scripts/k3d/up.sh does this)
# Build stage: the same scripts/deps.sh and Makefile as a developer machine.
# Runtime stage: only the shared libraries the binaries link, a non-root user
# (65532), exec-form entrypoint (no shell needed), nothing written at run time,
# so it runs with readOnlyRootFilesystem (config/manager/manager.yaml).
# scripts/manifests-check.sh checks that every library bin/kueue-ks needs is
# installed below.

FROM debian:bookworm-slim AS build
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /src
# Dependencies first, so source edits do not reinstall them.
COPY scripts/deps.sh scripts/deps.sh
RUN apt-get update -qq \
 && scripts/deps.sh \
 && rm -rf /var/lib/apt/lists/*
COPY . .
RUN make -j"$(nproc)" KKS_SKIP_DEPS=1 MODE=rel bin/kueue-ks \
 && strip bin/kueue-ks \
 && bin/kueue-ks version

FROM debian:bookworm-slim
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update -qq \
 && apt-get install -y --no-install-recommends \
      ca-certificates libcurl4 libyaml-0-2 libev4 libssl3 libjansson4 \
      libmicrohttpd12 libgnutls30 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/* \
 && groupadd --gid 65532 kueue-ks \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin kueue-ks
COPY --from=build /src/bin/kueue-ks /usr/local/bin/kueue-ks
USER 65532:65532
WORKDIR /
EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/kueue-ks"]
CMD ["run"]
