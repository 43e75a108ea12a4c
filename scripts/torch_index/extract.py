"""Extract a raw torch index entry from one torch wheel (see wheeldoc/abi/index_build.py).

    uv run python scripts/torch_index/extract.py TORCH.whl OUT.json.gz
"""

import sys

from wheeldoc.abi.index_build import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
