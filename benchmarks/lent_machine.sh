#!/bin/bash
# The runner's checks on a lent many-core machine (the `device` tool), one call of about 9 minutes:
#   1. the same records for any --jobs: arrhythmia's EEM and WELM cells at --jobs 1, 8 and 16, every column but
#      timings and provenance equal (benchmarks/compare_records.py);
#   2. the issue-60 chunk (7 unbalanced sets, 1 repeat) at --jobs 16: the workers' share (benchmarks/timeline.py),
#      then the code before the runner's split (a7e32b3) on the same chunk, stopped at OLD_LIMIT seconds.
# That machine reaches no package registry and takes a working tree of 64 MiB at most. Prepared here, in an
# ignored folder .device/ carried by the call (results/ moved aside for the call: it is over the limit):
#   .device/whl/    cp312 manylinux wheels (`pip download --no-deps --only-binary=:all: --python-version 3.12`)
#                   of what its image lacks or holds at another version: pandas, scikit-learn, threadpoolctl,
#                   joblib, pyyaml, tabulate, typer (and pydantic, pydantic_core, annotated-types,
#                   typing-inspection, annotated-doc, typing_extensions, click, shellingham, rich, markdown-it-py,
#                   mdurl), clarabel, xlrd, scikit-posthocs, and this checkout's own (`pip wheel --no-deps .`);
#   .device/site/libsvm/  libsvm-official has no wheel: the package as installed here (it loads its C library
#                   with ctypes, so the Python version does not matter);
#   .device/old/eemrepro/ `git archive a7e32b3 eemrepro`;  .device/data/  the seven sets from the data cache.
# Measured 2026-11-27 with OLD_LIMIT=230 and an earlier form of this script (benchmarks/RESULTS.md, "Measured on a
# lent 16-core machine").
set -u
exec > >(tee "$OUT/log.txt") 2>&1  # what it prints comes back as a file too
export PYTHONUNBUFFERED=1 EEMREPRO_DATA=$PWD/.device/data
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .device/whl/*.whl || exit 3
cp -r .device/site/libsvm /tmp/site/
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
python3 -c "import os, numpy, scipy, sklearn, pandas; print('cores', os.cpu_count(), 'numpy', numpy.__version__, 'scipy', scipy.__version__, 'sklearn', sklearn.__version__, 'pandas', pandas.__version__)"
R="python3 -m eemrepro run configs/unbalanced.yaml --quiet --repeats 1"
since() { python3 -c "print(round($(date +%s.%N) - $1, 1))"; }
EEM="--only-datasets arrhythmia --only-models EEMsig,EEMnsig,EEMrbf,WELMsig,WELMnsig,WELMrbf"
for j in 1 8 16; do s=$(date +%s.%N); $R $EEM --jobs $j --out /tmp/a$j > /tmp/a$j.log 2>&1; echo "--jobs $j: rc $? $(since $s) s"; done
python3 benchmarks/compare_records.py /tmp/a1 /tmp/a8 /tmp/a16 | tee $OUT/jobs.txt
SETS="--only-datasets libras-move,spectrometer,arrhythmia,ecoli,oil-spill,car-evaluation,solar-flare"
s=$(date +%s.%N); $R $SETS --jobs 16 --out /tmp/new > /tmp/new.log 2>&1; echo "chunk, this checkout, --jobs 16: rc $? $(since $s) s"
python3 benchmarks/timeline.py /tmp/new --out $OUT/timeline_new.png 2>&1 | tee $OUT/timeline_new.txt
s=$(date +%s.%N); PYTHONPATH=$PWD/.device/old:/tmp/site timeout ${OLD_LIMIT:-300} $R $SETS --jobs 16 --out /tmp/old \
  > /tmp/old.log 2>&1; echo "chunk, a7e32b3, --jobs 16: rc $? (124: stopped at OLD_LIMIT) $(since $s) s"
echo "total $(( $(date +%s) - T0 )) s"
