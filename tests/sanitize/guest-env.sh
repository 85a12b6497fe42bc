# Sourced as /etc/vwc-test/env in the sanitized guest (tests/sanitize).
# Reports go to files (a case that hides stderr cannot hide them);
# guest-after.sh prints them. A report still makes the process fail.
mkdir -p /run/vwc-san
export ASAN_OPTIONS=log_path=/run/vwc-san/asan:detect_leaks=1:abort_on_error=0:suppressions=/etc/vwc-test/asan.supp
export LSAN_OPTIONS=suppressions=/etc/vwc-test/lsan.supp
export UBSAN_OPTIONS=log_path=/run/vwc-san/ubsan:print_stacktrace=1:halt_on_error=1
