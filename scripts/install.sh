#!/bin/sh
# Installs the spine binary from a GitHub release: detects the OS and architecture, downloads
# the release archive and its SHA-256 checksum, verifies the archive, and only then unpacks
# and installs `spine` (default ~/.local/bin). Nothing downloaded is ever run by a shell.
#
#   sh install.sh                          # the latest release into ~/.local/bin
#   sh install.sh --version v0.1.0         # a given release
#   sh install.sh --prefix /usr/local      # into /usr/local/bin
#   sh install.sh --bin-dir /opt/spine     # into that directory
#
# SPINE_INSTALL_BASE_URL replaces https://github.com/spine-rs/spine/releases (a mirror, or a
# file:// directory laid out as `download/TAG/ASSET` and `latest/download/ASSET`).
# Exit status: 0 installed, 1 failed (nothing installed), 2 bad usage.
set -eu

base_url="${SPINE_INSTALL_BASE_URL:-https://github.com/spine-rs/spine/releases}"
version="latest"
bin_dir=""

say() { printf 'install.sh: %s\n' "$*" >&2; }
fail() { say "$*"; exit 1; }
usage() {
    printf '%s\n' "usage: install.sh [--version TAG] [--prefix DIR | --bin-dir DIR]" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
        --version) [ $# -ge 2 ] || usage; version="$2"; shift 2 ;;
        --version=*) version="${1#*=}"; shift ;;
        --prefix) [ $# -ge 2 ] || usage; bin_dir="$2/bin"; shift 2 ;;
        --prefix=*) bin_dir="${1#*=}/bin"; shift ;;
        --bin-dir) [ $# -ge 2 ] || usage; bin_dir="$2"; shift 2 ;;
        --bin-dir=*) bin_dir="${1#*=}"; shift ;;
        -h | --help) usage ;;
        *) say "unknown argument: $1"; usage ;;
    esac
done
if [ -z "$bin_dir" ]; then
    [ -n "${HOME:-}" ] || fail "HOME is not set: give --prefix or --bin-dir"
    bin_dir="$HOME/.local/bin"
fi

os="$(uname -s)"
arch="$(uname -m)"
case "$arch" in
    x86_64 | amd64) arch="x86_64" ;;
    aarch64 | arm64) arch="aarch64" ;;
    *) fail "no release build for the architecture $arch" ;;
esac
case "$os" in
    Linux) target="$arch-unknown-linux-musl" ;;
    Darwin) target="$arch-apple-darwin" ;;
    *) fail "no release build for the OS $os" ;;
esac

asset="spine-$target.tar.gz"
case "$version" in
    latest) url="$base_url/latest/download/$asset" ;;
    *) url="$base_url/download/$version/$asset" ;;
esac

download() { # URL FILE
    if command -v curl >/dev/null 2>&1; then
        curl --proto '=https,file' --tlsv1.2 -fsSL -o "$2" "$1"
    elif command -v wget >/dev/null 2>&1; then
        case "$1" in
            file://*) cp "${1#file://}" "$2" ;;
            *) wget -q -O "$2" "$1" ;;
        esac
    else
        fail "neither curl nor wget is installed"
    fi
}

sha256_of() { # FILE
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d ' ' -f 1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d ' ' -f 1
    elif command -v openssl >/dev/null 2>&1; then
        openssl dgst -sha256 -r "$1" | cut -d ' ' -f 1
    else
        fail "no SHA-256 tool (sha256sum, shasum or openssl) to verify the download"
    fi
}

tmp="$(mktemp -d 2>/dev/null || mktemp -d -t spine-install)"
trap 'rm -rf "$tmp"' EXIT INT TERM

say "downloading $url"
download "$url" "$tmp/$asset" || fail "download failed: $url"
download "$url.sha256" "$tmp/$asset.sha256" || fail "download failed: $url.sha256"

# The checksum file is `HEX  NAME` (sha256sum's format); only the hex is used.
expected="$(cut -d ' ' -f 1 <"$tmp/$asset.sha256" | tr 'A-F' 'a-f')"
case "$expected" in
    *[!0-9a-f]* | "") fail "malformed checksum file $url.sha256" ;;
esac
[ "${#expected}" -eq 64 ] || fail "malformed checksum file $url.sha256"
actual="$(sha256_of "$tmp/$asset")"
if [ "$actual" != "$expected" ]; then
    fail "checksum mismatch for $asset: expected $expected, got $actual (nothing installed)"
fi
say "checksum verified ($actual)"

mkdir "$tmp/unpacked"
tar -xzf "$tmp/$asset" -C "$tmp/unpacked"
[ -f "$tmp/unpacked/spine" ] || fail "$asset holds no spine binary"
mkdir -p "$bin_dir"
# Copy next to the destination, then rename: a running spine keeps its old file.
cp "$tmp/unpacked/spine" "$bin_dir/.spine.new.$$"
chmod 0755 "$bin_dir/.spine.new.$$"
mv -f "$bin_dir/.spine.new.$$" "$bin_dir/spine"
say "installed $bin_dir/spine"
case ":${PATH:-}:" in
    *":$bin_dir:"*) ;;
    *) say "$bin_dir is not on PATH; add it to use \`spine\`" ;;
esac
