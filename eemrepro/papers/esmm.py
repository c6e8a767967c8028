"""Entropy-based support matrix machine (Zhu 2017): Table 4 (SPEC section 6).

The config ``configs/esmm_table4.yaml`` runs ESMM, SMM, MatMHKS, B-FSVM, FSVM and SVM
on the 25 KEEL sets over 10 stratified random train/test splits (the paper's Table 2
sizes), every hyperparameter chosen by inner 5-fold CV on AUC; the table shows the
AUC in percent, mean ± std over the splits. The published CSV names each data set by
its registry id (``dataset``) and by the paper (``paper_name``); its five image sets
(``data: image``) have no data here and are left out of the table and the check.
"""

from ..reports import Paper, TableSpec

#: Default check: |reproduced - published| <= max(3 points, published std). The
#: published stds over 10 splits are 1.4-3.7 points; the difference of two independent
#: 10-split means then has a standard error of sqrt(2 / 10) std, at most 1.7 points, and
#: 3 points is about two of those at the typical std: split sampling alone passes, a
#: different model behaviour (the paper's 5-10 point gaps between methods) fails.
TOLERANCE = {"abs": 3.0, "use_std": True}

PAPER = Paper(
    id="esmm",
    title="Entropy-based support matrix machine (Zhu 2017)",
    tables=(
        TableSpec(
            id="esmm_table4", stem="esmm_table4_auc",
            title="ESMM 2017 Table 4: AUC (%), mean ± std over 10 train/test splits ({selection})",
            published="esmm_table4_auc", published_filter={"data": "keel"}, published_value="auc_mean",
            published_std="auc_std", metric="auc", scale=100.0, digits=2, selection="nested",
            tolerance=TOLERANCE, pin_margin=0.5,
            notes=(
                "cell: reproduced mean±std over the 10 splits (delta = reproduced - published); the selected "
                "point shown is the most frequent over the splits (ESMM's n_neighbors is the paper's k; the "
                "paper's best k is the published CSV's column k)",
                "each point is read row-major as the most square r x c matrix (r <= c); a prime d gives 1 x d, "
                "where the nuclear norm is the l2 norm and SMM is a linear SVM with an extra l2 term",
                "SVM, FSVM, B-FSVM: RBF exp(-gamma ||x - y||^2), gamma = 1 / sigma^2, no class weights",
                "not run: the five image sets (COIL-20, Letter, ORL, PubFig, Gaze) have no data here and no "
                "stated protocol for their 10-class imbalance",
            ),
        ),
    ),
    configs=("configs/esmm_table4.yaml",),
)
