"""The installed package: it is the one pytest imports (not the source tree), its
extension uses the stable ABI, it ships its stubs and py.typed, and the stubs document
every public name with the signatures the functions have."""

import ast
import inspect
import pathlib
import sysconfig

import harbor

PACKAGE = pathlib.Path(harbor.__file__).parent
STUBS = PACKAGE / "__init__.pyi"


def test_the_tests_run_against_the_installed_package():
    site_packages = pathlib.Path(sysconfig.get_paths()["purelib"]).resolve()
    assert PACKAGE.resolve().parent == site_packages, PACKAGE


def test_the_extension_uses_the_stable_abi():
    extensions = list(PACKAGE.glob("_harbor*.so")) + list(PACKAGE.glob("_harbor*.pyd"))
    assert extensions, f"no extension module in {PACKAGE}"
    assert all(".abi3." in p.name or p.suffix == ".pyd" for p in extensions), extensions


def test_stubs_and_py_typed_ship_with_the_package():
    assert (PACKAGE / "py.typed").is_file()
    assert STUBS.is_file()


def stub_tree():
    return ast.parse(STUBS.read_text())


def test_every_public_name_is_in_the_stubs_with_a_docstring():
    documented = {}
    for node in stub_tree().body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            documented[node.name] = ast.get_docstring(node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            documented[node.target.id] = "annotated"
    for name in harbor.__all__:
        assert name in documented, f"{name} is not in {STUBS.name}"
        assert documented[name], f"{name} has no docstring in {STUBS.name}"


def test_the_stubs_give_the_functions_their_signatures():
    stubs = {
        node.name: node
        for node in stub_tree().body
        if isinstance(node, ast.FunctionDef)
    }
    for name in ["simulate", "gradient", "identify", "tableau", "devices"]:
        runtime = inspect.signature(getattr(harbor, name))
        stub = stubs[name].args
        positional = [a.arg for a in stub.posonlyargs + stub.args]
        keyword = [a.arg for a in stub.kwonlyargs]
        assert [p.name for p in runtime.parameters.values() if p.kind != p.KEYWORD_ONLY] == positional, name
        assert [p.name for p in runtime.parameters.values() if p.kind == p.KEYWORD_ONLY] == keyword, name
        defaults = [ast.literal_eval(d) for d in stub.kw_defaults]
        assert [p.default for p in runtime.parameters.values() if p.kind == p.KEYWORD_ONLY] == defaults, name


def test_the_result_classes_have_the_attributes_the_stubs_declare():
    declared = {
        node.name: {
            item.target.id
            for item in node.body
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
        }
        for node in stub_tree().body
        if isinstance(node, ast.ClassDef)
    }
    for cls in [harbor.SimulationResult, harbor.GradientResult, harbor.IdentifyResult, harbor.Tableau]:
        attributes = {name for name, _ in inspect.getmembers(cls) if not name.startswith("_")}
        methods = {name for name, value in inspect.getmembers(cls) if callable(value)}
        assert attributes - methods == declared[cls.__name__], cls.__name__
