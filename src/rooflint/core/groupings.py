"""How launches can be grouped (`--group-by`, `group_by=`): the keys of each grouping. Apart from
ranking so that the commands list the choices without loading pandas."""

GROUPINGS = {
    "kernel": ["kernel", "grid", "block"],  # name and launch configuration
    "name": ["kernel"],
    "source": ["source"],
    "range": ["range"],
    "family": ["family"],
    "op": ["op", "op_input_dims", "op_input_types"],  # PyTorch traces: operator + shapes + dtypes
    "module": ["module"],  # PyTorch traces: nn.Module path
    "rank": ["rank", "kernel", "grid", "block"],  # traces of a distributed job: kernels per rank
}
