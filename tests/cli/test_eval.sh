#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `codenib eval`: a small Python shop in a git repository with two commits,
# mirrored bare as acme/shop; a dataset of three issues; the predictions,
# the scores and the report; resuming (finished, cut short, --limit, a
# SIGTERM), --jobs, --score-only with a reference, and the errors.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL OPENAI_BASE_URL CODENIB_BASE_URL

need_python_backend
if ! command -v git >/dev/null 2>&1; then
  echo "1..0 # SKIP git is not installed"
  exit 0
fi

# ---- the project: two commits, mirrored -------------------------------------------
src=$TMPBASE/src
mkdir -p "$src/shop" "$src/tests"
cat > "$src/shop/__init__.py" <<'EOF'
"""A tiny shop."""
EOF
cat > "$src/shop/cart.py" <<'EOF'
from shop.pricing import unit_price


class Cart:
    def __init__(self):
        self.lines = []

    def add_line(self, sku, quantity):
        self.lines.append((sku, quantity))


def compute_cart_total(cart, coupon=None):
    total = 0
    for sku, quantity in cart.lines:
        total += unit_price(sku) * quantity
    if coupon is not None:
        total -= coupon.amount
    return total
EOF
cat > "$src/shop/pricing.py" <<'EOF'
PRICES = {"apple": 3, "pear": 4}


def unit_price(sku):
    return PRICES[sku]


def format_price_label(amount):
    return "%d.00 EUR" % amount
EOF
cat > "$src/shop/payments.py" <<'EOF'
class CardDeclinedError(Exception):
    pass


def charge_credit_card(card_number, amount):
    if amount <= 0:
        raise CardDeclinedError("the card was declined: amount must be positive")
    return {"card": card_number[-4:], "charged": amount}
EOF
cat > "$src/tests/test_cart.py" <<'EOF'
from shop.cart import compute_cart_total


def test_compute_cart_total_is_not_indexed():
    assert compute_cart_total
EOF
g() { git -C "$src" -c user.name=t -c user.email=t@example.org -c commit.gpgsign=false "$@"; }
g init -q && g add -A && g commit -q -m one || { echo "1..0 # SKIP git cannot commit here"; exit 0; }
c1=$(g rev-parse HEAD)
cat > "$src/shop/inventory.py" <<'EOF'
class InventoryLedger:
    def __init__(self):
        self.stock = {}

    def restock_warehouse(self, sku, count):
        self.stock[sku] = self.stock.get(sku, 0) + count

    def reserve_stock_items(self, sku, count):
        if self.stock.get(sku, 0) < count:
            raise KeyError(sku)
        self.stock[sku] -= count
EOF
g add -A && g commit -q -m two
c2=$(g rev-parse HEAD)
mirrors=$TMPBASE/mirrors
mkdir -p "$mirrors/acme+shop"
git clone -q --bare "$src" "$mirrors/acme+shop/repo"

# ---- the dataset ----------------------------------------------------------------------
gold() { # FILE ENTITY MODULE
  printf '[{"file": "%s", "changes": {"edited_entities": ["%s:%s"], "edited_modules": ["%s:%s"]}}]' \
    "$1" "$1" "$2" "$1" "$3"
}
data=$TMPBASE/dataset.jsonl
{
  printf '{"instance_id": "acme__shop-1", "repo": "acme/shop", "base_commit": "%s", "problem_statement": "compute_cart_total ignores the coupon when the cart is empty", "gt_file_changes": %s}\n' \
    "$c1" "$(gold shop/cart.py compute_cart_total compute_cart_total)"
  printf '{"instance_id": "acme__shop-2", "repo": "acme/shop", "base_commit": "%s", "problem_statement": "Paying 0 fails: CardDeclinedError: the card was declined: amount must be positive", "gt_file_changes": %s}\n' \
    "$c1" "$(gold shop/payments.py charge_credit_card charge_credit_card)"
  printf '{"instance_id": "acme__shop-3", "repo": "acme/shop", "base_commit": "%s", "problem_statement": "restock_warehouse should refuse negative counts", "gt_file_changes": %s}\n' \
    "$c2" "$(gold shop/inventory.py InventoryLedger.restock_warehouse InventoryLedger)"
} > "$data"

rows() { grep -c '"instance_id"' "$1"; }
row_of() { grep "\"instance_id\": *\"$2\"" "$1" | tail -n 1; }
files_of() { # PRED: instance and file list per line, sorted by instance
  sed -n 's/.*"instance_id": *"\([^"]*\)".*"found_files": *\(\[[^]]*\]\).*/\1 \2/p' "$1" | sort
}

# ---- usage ------------------------------------------------------------------------------
cn eval --mirrors "$mirrors"
check "no --dataset: exit 2" rc_is 2
check "and says what is missing" err_has "give --dataset"
cn eval --dataset "$data"
check "no --mirrors: exit 2" rc_is 2
cn eval --dataset "$data" --mirrors "$mirrors" --jobs 0
check "--jobs 0 is refused" rc_is 2
cn eval --dataset "$data" --mirrors "$mirrors" --policy greedy
check "an unknown policy is refused" rc_is 2
cn eval --dataset "$data" --mirrors "$mirrors" --model m
check "--model without --policy agent is refused" rc_is 2
cn eval --dataset "$data" --mirrors "$mirrors" --reference nofile
check "--reference without NAME= is refused" rc_is 2
cn eval --help
check "--help names the outputs" out_has "predictions.jsonl"

# ---- a full run ---------------------------------------------------------------------------
out=$TMPBASE/run1
cn eval --dataset "$data" --mirrors "$mirrors" --out "$out"
check "the eval exits 0" rc_is 0
check "predictions.jsonl has a row per instance" test "$(rows "$out/predictions.jsonl")" -eq 3
check "rows carry the three ranked lists" sh -c \
  'test "$(grep -c "\"found_files\": *\[.*\"found_modules\": *\[.*\"found_entities\": *\[" "$0")" -eq 3' \
  "$out/predictions.jsonl"
check "and the time each took" grep -q '"elapsed_s"' "$out/predictions.jsonl"
check "no row is an error" sh -c '! grep -q "\"error\"" "$0"' "$out/predictions.jsonl"
check "the issue naming compute_cart_total ranks shop/cart.py first" sh -c \
  'echo "$0" | grep -q "\"found_files\": *\[ *\"shop/cart.py\""' "$(row_of "$out/predictions.jsonl" acme__shop-1)"
check "the issue naming restock_warehouse finds the method" sh -c \
  'echo "$0" | grep -q "shop/inventory.py:InventoryLedger.restock_warehouse"' \
  "$(row_of "$out/predictions.jsonl" acme__shop-3)"
check "test files are not indexed" sh -c '! grep -q "tests/test_cart.py" "$0"' "$out/predictions.jsonl"
check "the table is printed" out_has "file@1"
check "with the summary" out_has "3 instances: 3 run now, 0 failed"
check "metrics.json has overall file acc@1" sh -c \
  'tr -d " \n" < "$0" | grep -q "\"overall\":{\"file\":{\"n\":3,\"acc\":{\"1\":"' "$out/metrics.json"
check "metrics.json has per_repo acme/shop" grep -q '"acme/shop"' "$out/metrics.json"
check "metrics.json says the policy" grep -q '"policy": "offline"' "$out/metrics.json"
check "report.md was written" grep -q "file@1" "$out/report.md"
check "acc_at_k.svg was written" grep -q "<svg" "$out/acc_at_k.svg"
check "trees and index caches are removed" sh -c \
  'test -z "$(ls -A "$0/work/trees/acme+shop" 2>/dev/null)" && test -z "$(ls -A "$0/work/cache" 2>/dev/null)"' "$out"

# ---- resuming ------------------------------------------------------------------------------
cp "$out/predictions.jsonl" "$TMPBASE/full.jsonl"
cn eval --dataset "$data" --mirrors "$mirrors" --out "$out"
check "a rerun exits 0" rc_is 0
check "and says everything is done" err_has "all 3 instances already done"
check "and runs nothing" sh -c 'cmp -s "$0" "$1"' "$out/predictions.jsonl" "$TMPBASE/full.jsonl"
check "the summary says so" out_has "0 run now"

# a writer interrupted mid-row: the last line cut in half
head -n 2 "$TMPBASE/full.jsonl" > "$out/predictions.jsonl"
tail -n 1 "$TMPBASE/full.jsonl" | cut -c 1-40 | tr -d '\n' >> "$out/predictions.jsonl"
cut_id=$(tail -n 1 "$TMPBASE/full.jsonl" | sed 's/.*"instance_id": *"\([^"]*\)".*/\1/')
cn eval --dataset "$data" --mirrors "$mirrors" --out "$out"
check "a cut last row: the rerun exits 0" rc_is 0
check "and says 2 of 3 are done" err_has "2 of 3 already done, continuing"
check "the file is whole again, 3 rows" test "$(rows "$out/predictions.jsonl")" -eq 3
check "the cut instance was run again" sh -c 'grep -c "\"$1\"" "$0" | grep -qx 1' "$out/predictions.jsonl" "$cut_id"
check "every line is a JSON object" sh -c '! grep -v "^{.*}$" "$0"' "$out/predictions.jsonl"
check "the summary counts one run" out_has "1 run now"

# a last row whole but without its newline
printf '%s' "$(head -n 2 "$TMPBASE/full.jsonl")" > "$out/predictions.jsonl"
cn eval --dataset "$data" --mirrors "$mirrors" --out "$out" --quiet
check "a last row without its newline counts as done" sh -c \
  '[ '"$rc"' -eq 0 ] && grep -q "1 run now" "$0"' "$OUT"
check "and the next row starts on a line of its own" sh -c \
  '[ "$(grep -c "^{.*}$" "$0")" -eq 3 ] && [ "$(grep -c . "$0")" -eq 3 ]' "$out/predictions.jsonl"

# --limit first, then the rest
out2=$TMPBASE/run2
cn eval --dataset "$data" --mirrors "$mirrors" --out "$out2" --limit 1 --quiet
check "--limit 1 runs one instance" sh -c '[ "$0" -eq 0 ] && [ "$(grep -c . "$1")" -eq 1 ]' "$rc" \
  "$out2/predictions.jsonl"
check "--limit 1 scores one instance" grep -q '"instances": 1' "$out2/metrics.json"
check "--quiet draws no progress" sh -c '! grep -q "\[1/1\]" "$0"' "$ERR"
cn eval --dataset "$data" --mirrors "$mirrors" --out "$out2"
check "then a full run continues" err_has "1 of 3 already done, continuing"
check "and completes the rest" test "$(rows "$out2/predictions.jsonl")" -eq 3
check "progress names each instance run" sh -c 'grep -q "\[3/3\] acme__shop-" "$0"' "$ERR"

# --instances
out3=$TMPBASE/run3
cn eval --dataset "$data" --mirrors "$mirrors" --out "$out3" --instances acme__shop-3 --quiet
check "--instances runs just those" sh -c '[ "$(grep -c . "$0")" -eq 1 ] && grep -q acme__shop-3 "$0"' \
  "$out3/predictions.jsonl"
cn eval --dataset "$data" --mirrors "$mirrors" --out "$out3" --instances acme__shop-9 --quiet
check "an unknown instance id: exit 1, named" sh -c '[ '"$rc"' -eq 1 ] && grep -q "acme__shop-9" "$0"' "$ERR"

# --jobs 2 gives the same answers
out4=$TMPBASE/run4
cn eval --dataset "$data" --mirrors "$mirrors" --out "$out4" --jobs 2 --quiet
check "--jobs 2 exits 0" rc_is 0
files_of "$TMPBASE/full.jsonl" > "$TMPBASE/files1"
files_of "$out4/predictions.jsonl" > "$TMPBASE/files2"
check "--jobs 2 ranks the same files as --jobs 1" sh -c \
  '[ "$(grep -c . "$0")" -eq 3 ] && cmp -s "$0" "$1"' "$TMPBASE/files1" "$TMPBASE/files2"

# ---- settings: --without, and rows made differently never mixed --------------------------
out5=$TMPBASE/run5
cn eval --dataset "$data" --mirrors "$mirrors" --out "$out5" --limit 1 --quiet --without names,literals
check "--without: the eval exits 0" rc_is 0
check "settings.json records the signals switched off" grep -q '"without": "names,literals"' "$out5/settings.json"
check "metrics.json carries the settings" grep -q '"without": "names,literals"' "$out5/metrics.json"
cn eval --dataset "$data" --mirrors "$mirrors" --out "$out5" --quiet
check "continuing with other settings: exit 1" rc_is 1
check "and says what made the rows there" sh -c \
  'grep -q "holds rows made with other settings" "$0" && grep -q "names,literals" "$0"' "$ERR"
check "no row was added" test "$(rows "$out5/predictions.jsonl")" -eq 1
cn eval --dataset "$data" --mirrors "$mirrors" --out "$out5" --quiet --without literals,names
check "the same signals in another order continue the run" sh -c \
  '[ '"$rc"' -eq 0 ] && [ "$(grep -c "\"instance_id\"" "$0")" -eq 3 ]' "$out5/predictions.jsonl"
cn eval --dataset "$data" --mirrors "$mirrors" --out "$out5" --without bogus
check "an unknown signal: exit 2, the known ones listed" sh -c \
  '[ '"$rc"' -eq 2 ] && grep -q "known: route" "$0"' "$ERR"
cn eval --dataset "$data" --mirrors "$mirrors" --policy agent --model m --without names
check "--without with the agent: exit 2" rc_is 2

# ---- --score-only and references ------------------------------------------------------------
ref=$TMPBASE/ref.jsonl
cat > "$ref" <<'EOF'
{"instance_id": "acme__shop-1", "found_files": ["shop/cart.py"], "found_modules": ["shop/cart.py:compute_cart_total"], "found_entities": ["shop/cart.py:compute_cart_total"]}
{"instance_id": "acme__shop-2", "found_files": ["shop/cart.py"], "found_modules": [], "found_entities": []}
EOF
cp "$out/predictions.jsonl" "$TMPBASE/before_score.jsonl"
cn eval --dataset "$data" --out "$out" --score-only --reference perfect-ish="$ref" --json
check "--score-only needs no mirrors and exits 0" rc_is 0
check "it runs nothing" cmp -s "$out/predictions.jsonl" "$TMPBASE/before_score.jsonl"
check "--json prints the metrics" out_has '"overall"'
check "the reference is scored on the same instances" sh -c \
  'tr -d " \n" < "$0" | grep -q "\"references\":{\"perfect-ish\":{\"instances\":3"' "$out/metrics.json"
check "its file@1 is 1/3 (one hit, one miss, one missing)" sh -c \
  'tr -d " \n" < "$0" | grep -Eq "\"perfect-ish\":\{\"instances\":3.*\"file\":\{\"n\":3,\"acc\":\{\"1\":0\.333"' \
  "$out/metrics.json"
check "the report has a row for it" grep -q "perfect-ish" "$out/report.md"
cn eval --dataset "$data" --out "$out" --score-only --reference r="$ref"
check "the table has the reference row" out_has "r "
printf '{"instance_id": "acme__shop-1", "found_files": "shop/cart.py"}\n' > "$TMPBASE/badref.jsonl"
cn eval --dataset "$data" --out "$out" --score-only --reference bad="$TMPBASE/badref.jsonl"
check "a bad reference file: exit 1, file:line named" sh -c \
  '[ '"$rc"' -eq 1 ] && grep -q "badref.jsonl:1" "$0"' "$ERR"
cn eval --dataset "$data" --out "$TMPBASE/empty" --score-only
check "--score-only with no predictions yet: exit 1, says why" sh -c \
  '[ '"$rc"' -eq 1 ] && grep -q "no predictions yet" "$0"' "$ERR"

# ---- bad input ----------------------------------------------------------------------------------
bad=$TMPBASE/bad.jsonl
head -n 1 "$data" > "$bad"
echo '{"instance_id": "acme__shop-9", "repo": ' >> "$bad"
head -n 2 "$data" | tail -n 1 >> "$bad"
cn eval --dataset "$bad" --mirrors "$mirrors" --out "$TMPBASE/run5"
check "a bad dataset line: exit 1" rc_is 1
check "named with file:line" err_has "bad.jsonl:2"

# an instance whose repository has no mirror: an error row, the eval still runs
ghost=$TMPBASE/ghost.jsonl
{
  head -n 1 "$data"
  printf '{"instance_id": "ghost__town-1", "repo": "ghost/town", "base_commit": "%s", "problem_statement": "compute_cart_total", "gt_file_changes": %s}\n' \
    "$c1" "$(gold town/main.py main main)"
} > "$ghost"
out6=$TMPBASE/run6
cn eval --dataset "$ghost" --mirrors "$mirrors" --out "$out6"
check "a missing mirror: the eval still exits 0" rc_is 0
check "its row says which mirror is missing" sh -c \
  'grep "ghost__town-1" "$0" | grep -q "\"error\": *\"no mirror for ghost/town at $1/ghost+town/repo\""' \
  "$out6/predictions.jsonl" "$mirrors"
check "with empty lists" sh -c 'grep "ghost__town-1" "$0" | grep -q "\"found_files\": *\[ *\]"' "$out6/predictions.jsonl"
check "the progress shows the failure" err_has "ghost__town-1 failed"
check "the summary counts it" out_has "2 instances: 2 run now, 1 failed"
check "it is scored as a miss" sh -c \
  'tr -d " \n" < "$0" | grep -q "\"per_repo\":{\"acme/shop\".*\"ghost/town\":{\"instances\":1,\"levels\":{\"file\":{\"n\":1,\"acc\":{\"1\":0"' \
  "$out6/metrics.json"
check "metrics.json lists it as failed" sh -c 'tr -d " \n" < "$0" | grep -q "\"failed\":\[\"ghost__town-1\"\]"' \
  "$out6/metrics.json"
mkdir -p "$mirrors/ghost+town"
git clone -q --bare "$src" "$mirrors/ghost+town/repo"
cn eval --dataset "$ghost" --mirrors "$mirrors" --out "$out6"
check "once the mirror is there, the failed instance is run again" sh -c \
  '[ '"$rc"' -eq 0 ] && grep "1 of 2 already done" "$0" >/dev/null' "$ERR"
check "and its new row replaces the error" sh -c 'grep -q "1 run now, 0 failed" "$0"' "$OUT"

# ---- --policy agent: a model on a loopback OpenAI-compatible server ------------------------
cat > "$TMPBASE/script.jsonl" <<'EOF'
{"endpoint": "chat", "body": {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"path\": \"shop/payments.py\"}"}}]}}
{"endpoint": "chat", "body": {"role": "assistant", "content": "The check is wrong.\nFiles: shop/payments.py\nSymbols: shop/payments.py:charge_credit_card\nLocations: shop/payments.py:5-8"}}
EOF
start_fake_openai "$TMPBASE/script.jsonl"
cn eval --dataset "$data" --mirrors "$mirrors" --out "$TMPBASE/agent" --policy agent --quiet
check "--policy agent without a model: exit 2" rc_is 2
CODENIB_API_KEY=k cn eval --dataset "$data" --mirrors "$mirrors" --out "$TMPBASE/agent" --policy agent \
  --model fake-chat --base-url "http://127.0.0.1:$port/v1" --instances acme__shop-2 --quiet
check "--policy agent exits 0" rc_is 0
check "the model's answer is the prediction" sh -c \
  'grep -q "\"found_entities\": *\[ *\"shop/payments.py:charge_credit_card\" *\]" "$0"' \
  "$TMPBASE/agent/predictions.jsonl"
check "the model was asked with the issue text" grep -q "CardDeclinedError" "$TMPBASE/log.jsonl"
check "metrics.json says the policy and the model" sh -c \
  'grep -q "\"policy\": \"agent\"" "$0" && grep -q "\"model\": \"fake-chat\"" "$0"' "$TMPBASE/agent/metrics.json"
printf 'system_prompt: "EVAL-HARNESS-MARK: answer with the contract."\nmodel: other-model\n' >"$TMPBASE/h.yaml"
start_fake_openai "$TMPBASE/script.jsonl"
CODENIB_API_KEY=k cn eval --dataset "$data" --mirrors "$mirrors" --out "$TMPBASE/agent_h" --policy agent \
  --model fake-chat --base-url "http://127.0.0.1:$port/v1" --instances acme__shop-2 --quiet --harness "$TMPBASE/h.yaml"
check "--policy agent takes --harness" rc_is 0
check "the harness's options reach the model" grep -q "EVAL-HARNESS-MARK" "$TMPBASE/log.jsonl"
check "and --model still wins over its model" sh -c '! grep -q "other-model" "$0"' "$TMPBASE/log.jsonl"
kill $server 2>/dev/null
cn eval --dataset "$data" --mirrors "$mirrors" --harness "$TMPBASE/h.yaml"
check "--harness without --policy agent is refused" rc_is 2

# ---- an instance that hangs, one whose process is killed -----------------------------------
# A `git` first on PATH that hangs, or kills the instance's process (its
# parent), for two made-up commits, and is the real git otherwise.
mkdir -p "$TMPBASE/fakebin"
real_git=$(command -v git)
{
  echo '#!/bin/sh'
  echo 'case "$*" in'
  echo '  *feedface0hang*) sleep 311 ;;'
  echo '  *feedface0crash*) kill -KILL $PPID; sleep 37 ;;'
  echo 'esac'
  echo "exec $real_git \"\$@\""
} > "$TMPBASE/fakebin/git"
chmod +x "$TMPBASE/fakebin/git"
odd=$TMPBASE/odd.jsonl
for what in hang crash; do
  printf '{"instance_id": "acme__shop-%s", "repo": "acme/shop", "base_commit": "feedface0%s", "problem_statement": "compute_cart_total", "gt_file_changes": %s}\n' \
    $what $what "$(gold shop/cart.py compute_cart_total compute_cart_total)"
done > "$odd"
out8=$TMPBASE/run8
saved_path=$PATH
PATH=$TMPBASE/fakebin:$PATH
cn eval --dataset "$odd" --mirrors "$mirrors" --out "$out8" --timeout 2 --instances acme__shop-hang
check "an instance over --timeout: the eval still exits 0" rc_is 0
check "its row says it timed out" sh -c 'grep "acme__shop-hang" "$0" | grep -q "\"error\": *\"timed out after 2 s"' \
  "$out8/predictions.jsonl"
cn eval --dataset "$odd" --mirrors "$mirrors" --out "$out8" --instances acme__shop-crash
PATH=$saved_path
check "an instance whose process is killed: the eval still exits 0" rc_is 0
check "its row is an error pointing at its log" sh -c \
  'grep "acme__shop-crash" "$0" | grep -q "\"error\": *\"[^\"]*; see [^\"]*acme__shop-crash.log\""' \
  "$out8/predictions.jsonl"
check "and the log is kept" test -f "$out8/work/logs/acme__shop-crash.log"
if command -v ps >/dev/null 2>&1; then
  check "nothing the two instances started is left running" sh -c '! ps -eo args | grep -Eqx "sleep (311|37)"'
fi
cn eval --dataset "$odd" --out "$out8" --score-only
check "both are scored as misses" sh -c 'tr -d " \n" < "$0" | grep -q "\"file\":{\"n\":2,\"acc\":{\"1\":0"' \
  "$out8/metrics.json"

# ---- interrupted by SIGTERM -----------------------------------------------------------------
# Many instances of one commit, one at a time; stopped once the first rows are written.
many=$TMPBASE/many.jsonl
i=1
while [ $i -le 30 ]; do
  printf '{"instance_id": "acme__shop-m%d", "repo": "acme/shop", "base_commit": "%s", "problem_statement": "restock_warehouse fails for sku %d", "gt_file_changes": %s}\n' \
    $i "$c2" $i "$(gold shop/inventory.py InventoryLedger.restock_warehouse InventoryLedger)"
  i=$((i + 1))
done > "$many"
out7=$TMPBASE/run7
count_rows() { n=$(grep -c . "$1" 2>/dev/null); echo "${n:-0}"; }
# shellcheck disable=SC2086
$CN_RUN "$CODENIB" eval --dataset "$many" --mirrors "$mirrors" --out "$out7" --quiet >"$OUT" 2>"$ERR" &
pid=$!
i=0
while [ "$(count_rows "$out7/predictions.jsonl")" -lt 2 ] && [ $i -lt 3000 ]; do
  sleep 0.1
  i=$((i + 1))
done
kill -TERM $pid
wait $pid
rc=$?
n_at_stop=$(count_rows "$out7/predictions.jsonl")
check "SIGTERM: exit 130" rc_is 130
check "and says how to continue" err_has "run the same command again to continue"
check "rows were written before the signal, not all of them" sh -c '[ "$0" -ge 2 ] && [ "$0" -lt 30 ]' "$n_at_stop"
check "the predictions stay valid JSON Lines" sh -c '! grep -v "^{.*\"found_entities\".*}$" "$0"' \
  "$out7/predictions.jsonl"
cn eval --dataset "$many" --mirrors "$mirrors" --out "$out7"
check "the interrupted eval resumes" sh -c '[ '"$rc"' -eq 0 ] && grep -q "$1 of 30 already done, continuing" "$0"' \
  "$ERR" "$n_at_stop"
check "and completes with one row per instance" test "$(rows "$out7/predictions.jsonl")" -eq 30

done_testing
