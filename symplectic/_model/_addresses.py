"""Addresses of compiled callbacks and of their user data (System.from_cfunc,
forces.from_cfunc, compiled constraints): the integers the binding passes to C."""
import numpy as np


def _address_of(obj, what="func"):
    """The integer address behind a compiled callback (or data pointer)."""
    import ctypes
    if isinstance(obj, bool):
        raise TypeError(f"{what} must be an address, not a bool")
    if isinstance(obj, int):
        address = obj
    elif hasattr(obj, "address") and isinstance(obj.address, int):          # numba cfunc
        address = obj.address
    elif type(obj).__name__ == "LowLevelCallable":                          # scipy
        cap = obj.function
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype = ctypes.c_void_p
        get.argtypes = [ctypes.py_object, ctypes.c_char_p]
        getname = ctypes.pythonapi.PyCapsule_GetName
        getname.restype = ctypes.c_char_p
        getname.argtypes = [ctypes.py_object]
        address = get(cap, getname(cap))
    elif isinstance(obj, ctypes._CFuncPtr):                                 # ctypes
        address = ctypes.cast(obj, ctypes.c_void_p).value
    elif isinstance(obj, ctypes.c_void_p):
        address = obj.value
    else:
        raise TypeError(f"{what} must be an address (int), a ctypes function pointer, a numba "
                        f"cfunc or a scipy.LowLevelCallable, got {type(obj).__name__}")
    if not address:
        raise ValueError(f"{what} is a null pointer")
    return int(address)


def _data_address(obj):
    """The pointer passed to a compiled callback as user_data (None: NULL)."""
    import ctypes
    if obj is None:
        return None
    if isinstance(obj, bool):
        raise TypeError("user_data must be an address, a NumPy array or a ctypes object, not a bool")
    if isinstance(obj, int):
        if obj == 0:
            return None
        return obj
    if isinstance(obj, np.ndarray):
        if not obj.flags.c_contiguous:
            raise ValueError("user_data: the NumPy array must be C-contiguous (use "
                             "np.ascontiguousarray); the callback receives a pointer to its "
                             "first element")
        if obj.size == 0:
            raise ValueError("user_data: the NumPy array is empty")
        return obj.ctypes.data
    if isinstance(obj, ctypes.c_void_p):
        if not obj.value:
            raise ValueError("user_data is a null pointer")
        return obj.value
    if isinstance(obj, ctypes._Pointer):
        address = ctypes.cast(obj, ctypes.c_void_p).value
        if not address:
            raise ValueError("user_data is a null pointer")
        return address
    if isinstance(obj, ctypes._SimpleCData) or isinstance(obj, (ctypes.Structure, ctypes.Union,
                                                                 ctypes.Array)):
        return ctypes.addressof(obj)
    raise TypeError(f"user_data must be None, an int address, a C-contiguous NumPy array or a "
                    f"ctypes object (pointer, c_void_p, Structure, array), got "
                    f"{type(obj).__name__}")
