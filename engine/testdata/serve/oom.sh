#!/usr/bin/env bash
# A server that dies while loading the model, as vLLM does when the KV cache does not fit.
echo "INFO Loading model weights took 41.2 GiB"
echo "ERROR Engine core initialization failed."
echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.81 GiB"
exit 1
