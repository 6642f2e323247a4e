#!/usr/bin/env bash
# Print the CMAKE_ARGS that llama-cpp-python (the embedded model's runtime) is built with.
#
# llama-cpp-python ships as source and compiles llama.cpp when pip installs it.
# Its default build tunes for the build machine (-march=native), which on some
# CPUs turns on AMX instructions that then fault at run time. These flags build
# for a fixed x86-64 feature set instead, with AVX-512 only where the CPU has it.
#
# Usage: CMAKE_ARGS="$(scripts/llama_cmake_args.sh)" pip install 'llama-cpp-python...'
set -euo pipefail

flags="-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
case "$(uname -m)" in
    x86_64 | amd64)
        flags="$flags -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
        if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
            flags="$flags -DGGML_AVX512=ON"
        else
            flags="$flags -DGGML_AVX512=OFF"
        fi
        ;;
esac
echo "$flags"
