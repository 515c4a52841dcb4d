#!/bin/sh
# Generate the configure script and Makefile.in from configure.ac and Makefile.am.
set -e
cd "$(dirname "$0")"
autoreconf -fi
