from django.core import checks


@checks.register()
def embedding_dimensions(app_configs, **kwargs):
    """The configured embeddings must fit the vector columns: say what to change before anything fails."""
    from integrations.embeddings import dimension_problem

    problem = dimension_problem()
    if problem:
        return [checks.Error(problem, id="memento.E001")]
    return []
