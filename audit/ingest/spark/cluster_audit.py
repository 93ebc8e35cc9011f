"""The audit of a table kept on the cluster, from sufficient statistics alone (issue 17, item 2).

:func:`audit_cluster` computes the blocks of ``results.json`` that :func:`audit.pipeline.run`
writes for a pairwise preference table, from what Spark group-bys return to the driver instead
of the judgments: the ``dataset`` block from :class:`~audit.contract.table.DatasetCounts`
(:func:`.aggregates.spark_dataset_counts`), the measurement from
:class:`~audit.measure.patterns.MeasureAggregates` and the pools' strata
(:mod:`.measure_aggregates`), the rank block from ``BoardPatterns``, ``UnitPatterns`` and the
flipped listing (:mod:`.aggregates`, :func:`audit.rank.rank_from_patterns`), the plan from the
same patterns (:func:`audit.planning.plan_from_patterns`), the advice from the units'
patterns and one limited query for the listed units (:func:`.advice.advise_from_cluster`).
Each is the pandas engine's code after its aggregates; ``tests/test_spark_aggregates.py``
checks the whole result against the pandas engine's.

``--engine spark`` (:func:`audit.pipeline.run`) takes this path for pairwise preference
tables; ``items.parquet`` is streamed from the cluster by :mod:`.units`.
"""

from __future__ import annotations

def audit_cluster(ct, *, bootstrap, min_per_pool: int = 2, unit: str = "judgment",
                  min_overlap: int = 10, min_annotator_judgments: int = 10,
                  plan: dict | None = None, advise: dict | None = None,
                  max_cells: int | None = None, step=None, **rank_options) -> dict:
    """The results of :class:`.coded.ClusterTable` ``ct`` (pairwise preferences), as
    :func:`audit.pipeline.audit_table` and :func:`audit.pipeline.next_steps` give them for
    the same judgments.

    The dataset's counts come first, and the driver's share of the audit estimated from them
    is checked against the memory budget in force (:func:`audit.budget.check_counts`; exit 2
    before any aggregate is collected). ``plan`` / ``advise``: the options of
    :func:`audit.planning.plan_block` and :func:`audit.advice.advise_block` (their defaults
    where missing), ``max_cells`` the advice's leaderboard cap; ``step``: the progress hook
    (:mod:`audit.progress`) around each stage, else the active profile's sections."""
    from ...contract.table import dataset_block
    from ...errors import InputError
    from ...measure.effect_aggregates import within_pool_from
    from ...measure.patterns import pool_disagreement_from, reliability_from
    from ...budget import check_counts
    from ...pipeline import meta
    from ...planning import PLAN_DEFAULTS, plan_from_patterns
    from ...profile import section
    from ...rank import board_keys, rank_from_patterns
    from ...results import plain
    from ...advice import ADVISE_DEFAULTS
    from .advice import advise_from_cluster
    from .aggregates import (spark_board_patterns, spark_dataset_counts, spark_flipped_listing,
                             spark_unit_patterns)
    from .measure_aggregates import cluster_aggregates, cluster_strata, release_strata

    if not ct.is_pairwise or not ct.scale.is_preference:
        raise InputError("the cluster's aggregates path covers pairwise preference tables; "
                         "audit other tables with the collect path (keep_on_cluster=False or "
                         "'auto')", key="keep_on_cluster")
    step = step or section  # run's hook times each stage itself (audit.profile.profiled_step)
    model_columns = ("model_a", "model_b")
    with step("counting on the cluster"):
        counts = spark_dataset_counts(ct.coded, ct.pools, models=ct.models,
                                      model_columns=model_columns)
    sizes = rank_options.get("sizes")
    check_counts(counts, source=ct.source, n_values=len(ct.scale.values), n_pools=len(ct.pools),
                 n_resamples=bootstrap.n_resamples,
                 n_sims=int(rank_options.get("n_sims") or 20_000),
                 max_size=max((int(x) for x in sizes), default=0) if sizes else 100)
    results = {"meta": meta(ct, bootstrap),
               "dataset": dataset_block(counts, name=ct.name, info=ct.info, scale=ct.scale,
                                        pools=list(ct.pools), judge_pools=ct.judge_pools)}
    with step("reliability and pool disagreement"):
        if not ct.annotators_given:  # vote counts: every block from the items' label counts
            from .label_counts import measure_votes

            agg, measured = measure_votes(ct, bootstrap=bootstrap, min_per_pool=min_per_pool,
                                          min_overlap=min_overlap,
                                          min_annotator_judgments=min_annotator_judgments)
            results.update(plain(measured))
        else:
            agg = cluster_aggregates(ct.coded, scale=ct.scale, pool_names=list(ct.pools),
                                     annotator_names=ct.annotators, judge_pools=ct.judge_pools,
                                     min_overlap=min_overlap, n_resamples=bootstrap.n_resamples)
            strata = cluster_strata(ct.coded, agg,
                                    min_annotator_judgments=min_annotator_judgments,
                                    n_permutations=bootstrap.n_resamples)
            try:
                # each scopes its own warnings, knowing the single-annotator pools (a second
                # scope around them re-worded the by-design NaNs as a data warning)
                rel = reliability_from(agg, bootstrap=bootstrap, min_overlap=min_overlap)
                pools = pool_disagreement_from(agg, bootstrap=bootstrap,
                                               min_per_pool=min_per_pool)
                within = within_pool_from(agg, strata, bootstrap=bootstrap,
                                          min_annotator_judgments=min_annotator_judgments)
            finally:
                release_strata(strata)
            results.update(plain({"reliability": rel, "pool_disagreement": pools,
                                  "within_pool": within}))
    with step("leaderboards and stability"):
        votes = ct.votes().cache()
        n_models = len(ct.models)
        pools_of = {key: tuple(ct.pools.index(p) for p in group)
                    for group, key in board_keys(ct).items()}
        bp = spark_board_patterns(votes, pools_of, n_models=n_models, unit=unit)
        up = spark_unit_patterns(votes, ct.pools, n_models=n_models)
        max_flipped = int(rank_options.get("max_flipped", 50))
        humans = ct.human_pools
        codes = [ct.pools.index(p) for p in humans]
        rows = (spark_flipped_listing(votes, codes, n_models=n_models, limit=max_flipped)
                if len(humans) >= 2 else None)
        listed, texts = [], None
        if rows is not None and len(rows):
            found = ct.item_texts(rows["item"].to_numpy())
            listed = [(name, ct.models[r.lo], ct.models[r.hi], bool(r.shown),
                       [getattr(r, f"o{c}") for c in codes])
                      for (name, _), r in zip(found, rows.itertuples())]
            if "text" in ct.items.columns:
                texts = [text for _, text in found]
        elif "text" in ct.items.columns:
            texts = []
        results.update(rank_from_patterns(ct, bp, up, (listed, texts), models=ct.models,
                                          bootstrap=bootstrap, unit=unit, **rank_options))
        votes.unpersist()
    with step("plan and advice"):
        results["plan"] = plan_from_patterns(
            ct, results, up, (agg.item_pool_label, agg.weights, agg.pool_names),
            n_models=n_models, **{**PLAN_DEFAULTS, **(plan or {})}, seed=bootstrap.seed)
        results["advise"] = advise_from_cluster(  # options as next_steps passes them
            ct, results, **{"budget": ADVISE_DEFAULTS["budget"], "more": ADVISE_DEFAULTS["more"],
                            **(advise or {})}, seed=bootstrap.seed, max_cells=max_cells)
    return results
