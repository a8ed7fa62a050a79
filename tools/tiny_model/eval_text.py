"""The evaluation text of the bundled tiny model for `minimax perplexity` (docs/perplexity.md).

Conversations drawn from the training mixture (tasks.sample: arithmetic, needles, tool calls, copy,
recall, 15% of the non-arithmetic ones with thinking disabled), rendered with the chat template
exactly as training rendered them, and concatenated. The seeds are EVAL_TEXT_SALT + i, which no
other tool draws from: training used 2^40 + i (i < 300,000) and 2^40 + 10^9 + i (the tokenizer's
corpus, i < 2,000), evaluate.py 2·2^40 + ..., needle_sparsity.py 3·2^40 + ..., token_accuracy.py
5·2^40 + i. Needs jinja2 (Debian's python3-jinja2):

    /usr/bin/python3 tools/tiny_model/eval_text.py --conversations 12 \\
        --output tests/data/perplexity/minimax-m3-tiny.txt
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tasks  # noqa: E402

EVAL_TEXT_SALT = 4 << 40


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=12)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    text = "".join("".join(piece for piece, _ in tasks.render(tasks.sample(EVAL_TEXT_SALT + i)))
                   for i in range(args.conversations))
    with open(args.output, "w", encoding="utf-8", newline="") as f:
        f.write(text)


if __name__ == "__main__":
    main()
