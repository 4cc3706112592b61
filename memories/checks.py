from django.core import checks

from integrations import embeddings
from memories.models import Memory


@checks.register()
def embedding_dimensions(app_configs, **kwargs):
    """The configured embeddings must fit the vector columns: say what to change before anything fails."""
    problem = embeddings.dimension_problem(column=Memory._meta.get_field("embedding").dimensions)
    if problem:
        return [checks.Error(problem, id="memento.E001")]
    return []
