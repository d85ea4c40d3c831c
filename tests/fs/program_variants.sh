# Sourced by the file-system tests (cache_fault_test.sh, fault_fs_test.sh):
# the programs they dispatch, each variant "EXAMPLE [OPTIONS]" with a key of
# its own and an "expect" in its run file. The element-wise examples under
# every workgroup size, xor and collatz also with a fixed output length,
# without passes and with a launch domain (--dim: the guarded shader;
# options that leave saxpy's text as it is are not used on it), then the
# other examples as they are (their workgroup sizes are part of their
# algorithms). Sets `variants` and `nvariants`.
variants=()
for wg in 1 2 4 8 16 32 64 128 256; do
  variants+=("saxpy --workgroup $wg")
  for spec in xor:out:5 collatz:steps:6; do
    IFS=: read -r ex out n <<<"$spec"
    variants+=("$ex --workgroup $wg" "$ex --workgroup $wg --fixed-length $out=$n"
               "$ex --workgroup $wg --no-passes" "$ex --workgroup $wg --dim $n")
  done
done
for ex in bitonic_sort byte_count find_pattern histogram matmul_tiled prefix_sum reduction softmax; do
  variants+=("$ex")
done
nvariants=${#variants[@]}
