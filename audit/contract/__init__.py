"""The data contract: canonical column names, typed labels, the pandera schema and the validated :class:`~audit.contract.table.AnnotationTable`."""
